import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt with N=2^15, r=8, p=1: 32 MiB and a few tens of ms per hash on libuv's thread pool (a
// login does not block the event loop). OWASP suggests N=2^17; 2^15 keeps a login fast on small
// hosts, and the parameters are stored with each hash so they can be raised without a migration.
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

// One hash at a time: libuv's pool has four threads that the store's fsyncs share, and a small host
// has few cores; a burst of logins queues here instead of starving the event loop.
const MAX_CONCURRENT = 1;
let running = 0;
const waiting: (() => void)[] = [];
let derived = 0;

/** How many scrypt hashes this process has computed: what logins cost, for tests and measurements. */
export function scryptHashes(): number {
  return derived;
}

async function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // A finishing hash hands its slot to the next waiter, so the cap holds.
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  derived += 1;
  try {
    const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: MAX_MEMORY };
    return await new Promise<Buffer>((resolve, reject) =>
      scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
        error ? reject(error) : resolve(key),
      ),
    );
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`: the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether `password` matches `stored`; a malformed stored hash never matches. Constant time in the key. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  if (![N, r, p].every(Number.isSafeInteger) || expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, salt, { N, r, p });
  return timingSafeEqual(key, expected);
}

/** A hash of a password nobody has, so that an unknown user costs as much time as a known one. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}

/** A random password for generated accounts: 24 characters of base64url (144 bits). */
export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}
