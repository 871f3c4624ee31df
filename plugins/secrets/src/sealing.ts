import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { RunnerError } from '@runner/plugin-sdk';

/** An AES-256 key and the short id recorded with every value sealed under it. */
export interface SecretKey {
  readonly id: string;
  readonly bytes: Buffer;
}

/** Bytes of an AES-256 key. */
export const KEY_BYTES = 32;
// GCM's recommended nonce length; a fresh random one per value sealed.
const IV_BYTES = 12;
const FORMAT = 'v1';

/**
 * The key's id: a digest of the key (never the key), so a row says which key sealed it and a
 * master holding another key says so instead of failing to authenticate.
 */
export function keyId(bytes: Buffer): string {
  return createHash('sha256').update('runner secrets key\0').update(bytes).digest('hex').slice(0, 16);
}

export function makeKey(bytes: Buffer): SecretKey {
  if (bytes.length !== KEY_BYTES) throw new TypeError(`a secrets key is ${KEY_BYTES} bytes, not ${bytes.length}`);
  return { id: keyId(bytes), bytes };
}

export function newKey(): SecretKey {
  return makeKey(randomBytes(KEY_BYTES));
}

/**
 * The value sealed with AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>` in base64url. `context` (the
 * scope and the name) is authenticated, not stored: a sealed value copied to another name or
 * scope does not open there.
 */
export function seal(key: SecretKey, context: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [FORMAT, iv, cipher.getAuthTag(), body]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** The plaintext of a sealed value; throws (never returns garbage) when the key or context is not the one it was sealed with. */
export function open(key: SecretKey, context: string, sealed: string): string {
  const [format, iv, tag, body] = sealed.split('.');
  if (format !== FORMAT || iv === undefined || tag === undefined || body === undefined)
    throw new RunnerError('secret_corrupt', `${context}: the stored value is not a sealed secret (format ${format})`, {
      status: 500,
    });
  const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new RunnerError('secret_corrupt', `${context}: the stored value does not authenticate under key ${key.id}`, {
      status: 500,
    });
  }
}
