import { createHash, createHmac, randomBytes } from 'node:crypto';
import { appendFile, chmod, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One usable line of a known_hosts file. */
export interface KnownHostEntry {
  file: string;
  line: number;
  marker?: '@revoked' | '@cert-authority';
  /** The hostnames field as written: patterns, or one `|1|salt|hash`. */
  hosts: string;
  keyType: string;
  key: Buffer;
}

export type HostKeyVerdict =
  | { kind: 'known'; entry: KnownHostEntry }
  | { kind: 'unknown' }
  /** The host is listed with other keys: a changed key, or someone in between. */
  | { kind: 'changed'; entries: KnownHostEntry[] }
  | { kind: 'revoked'; entry: KnownHostEntry };

/** How OpenSSH names a host in known_hosts: `host`, or `[host]:port` off port 22. Lower case. */
export function hostLabel(host: string, port: number): string {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return port === 22 ? h : `[${h}]:${port}`;
}

/** `SHA256:...` as `ssh-keygen -l` prints it. */
export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, ...). */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const length = key.readUInt32BE(0);
  return length > 0 && length < 64 && key.length >= 4 + length
    ? key.subarray(4, 4 + length).toString('latin1')
    : 'unknown';
}

export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = line.split(/\s+/);
    let marker: KnownHostEntry['marker'];
    if (fields[0].startsWith('@')) {
      if (fields[0] !== '@revoked' && fields[0] !== '@cert-authority') return;
      marker = fields.shift() as KnownHostEntry['marker'];
    }
    const [hosts, keyType, key64] = fields;
    if (!hosts || !keyType || !key64 || !/^[A-Za-z0-9+/]+=*$/.test(key64)) return;
    entries.push({ file, line: index + 1, marker, hosts, keyType, key: Buffer.from(key64, 'base64') });
  });
  return entries;
}

function wildcard(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

/** Whether a hostnames field applies to `label` (hashed, or patterns with `*`, `?` and `!`). */
export function hostsFieldMatches(hosts: string, label: string): boolean {
  if (hosts.startsWith('|1|')) {
    const [, , salt64, hash64] = hosts.split('|');
    if (!salt64 || !hash64) return false;
    const digest = createHmac('sha1', Buffer.from(salt64, 'base64')).update(label).digest('base64');
    return digest === hash64;
  }
  let matched = false;
  for (const pattern of hosts.split(',')) {
    if (pattern.startsWith('!')) {
      // A negated match excludes the host from the line, whatever else matches.
      if (wildcard(pattern.slice(1)).test(label)) return false;
    } else if (wildcard(pattern).test(label)) {
      matched = true;
    }
  }
  return matched;
}

/** OpenSSH's rules: a revoked key is refused, the same key accepts, other keys for the host mean a change. */
export function verifyHostKey(entries: KnownHostEntry[], label: string, key: Buffer): HostKeyVerdict {
  const forHost = entries.filter((e) => e.marker !== '@cert-authority' && hostsFieldMatches(e.hosts, label));
  const revoked = forHost.find((e) => e.marker === '@revoked' && e.key.equals(key));
  if (revoked) return { kind: 'revoked', entry: revoked };
  const plain = forHost.filter((e) => e.marker === undefined);
  const same = plain.find((e) => e.key.equals(key));
  if (same) return { kind: 'known', entry: same };
  return plain.length > 0 ? { kind: 'changed', entries: plain } : { kind: 'unknown' };
}

/** Reads the files that exist; a missing file is an empty one. */
export async function readKnownHosts(files: string[]): Promise<KnownHostEntry[]> {
  const all: KnownHostEntry[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    all.push(...parseKnownHosts(text, file));
  }
  return all;
}

const ALGORITHMS_OF_TYPE: Record<string, string[]> = {
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};
const DEFAULT_HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/**
 * Host key algorithms to offer, those of keys already known for the host first (as OpenSSH does):
 * otherwise a host known by its RSA key that also has an Ed25519 key would look changed.
 */
export function preferredHostKeyAlgorithms(entries: KnownHostEntry[], label: string): string[] {
  const known = entries
    .filter((e) => e.marker === undefined && hostsFieldMatches(e.hosts, label))
    .flatMap((e) => ALGORITHMS_OF_TYPE[e.keyType] ?? [e.keyType])
    .filter((a) => DEFAULT_HOST_KEY_ALGORITHMS.includes(a));
  return [...new Set([...known, ...DEFAULT_HOST_KEY_ALGORITHMS])];
}

/**
 * Appends the key hashed, as OpenSSH writes with HashKnownHosts (Debian's default): the file
 * does not list the hosts one manages. Creates `~/.ssh` (0700) and the file (0600) when missing.
 */
export async function recordHostKey(file: string, label: string, key: Buffer): Promise<string> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  let existing = '';
  try {
    existing = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const salt = randomBytes(20);
  const hash = createHmac('sha1', salt).update(label).digest();
  const line = `|1|${salt.toString('base64')}|${hash.toString('base64')} ${keyTypeOf(key)} ${key.toString('base64')}\n`;
  await appendFile(file, `${existing !== '' && !existing.endsWith('\n') ? '\n' : ''}${line}`, { mode: 0o600 });
  if (existing === '') await chmod(file, 0o600);
  return line.trimEnd();
}
