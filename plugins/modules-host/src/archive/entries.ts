import { createHash } from 'node:crypto';
import { isAbsolute, posix, relative } from 'node:path';
import { formatBytes } from '@runner/plugin-sdk';
import { fsReason } from '../file/fs-errors.js';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'zip';
export const FORMATS: readonly ArchiveFormat[] = ['tar', 'tar.gz', 'zip'];

/** `link` is a tar hard link to an earlier entry; it is extracted as a copy of that entry. */
export type EntryType = 'file' | 'directory' | 'symlink' | 'link';

/** An entry as an archive declares it (a name already checked by safeEntryName). */
export interface EntryHeader {
  name: string;
  type: EntryType;
  /** Permission bits only (0o7777). */
  mode: number;
  size: number;
  mtime: Date;
  /** The target of a symlink, or the entry a hard link copies. */
  linkname?: string;
}

/** The format a file name says: `.tar`, `.tar.gz`/`.tgz`, `.zip`. */
export function formatOfName(path: string): ArchiveFormat | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith('.tar.gz') || lower.endsWith('.tgz')) return 'tar.gz';
  if (lower.endsWith('.tar')) return 'tar';
  if (lower.endsWith('.zip')) return 'zip';
  return undefined;
}

/** The format the first bytes of a file show (gzip is taken for tar.gz), or undefined. */
export function formatOfBytes(head: Buffer): ArchiveFormat | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  // An empty zip is only its end record.
  if (head.length >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip';
  if (head.length >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  return undefined;
}

/**
 * The entry's name as a path relative to the destination ("./a/b/" -> "a/b"; "" for the
 * destination itself), or an error naming the entry when it would land outside it: an absolute
 * path, a drive letter, a `..` component, a NUL byte. Backslashes are refused rather than guessed
 * at: on this host they are ordinary name characters, for the tool that made the archive separators.
 */
export function safeEntryName(fn: string, raw: string): string {
  const refuse = (why: string) => new Error(`${fn}: entry ${JSON.stringify(raw)} ${why}; nothing was extracted`);
  if (raw.includes('\0')) throw refuse('contains a NUL byte');
  if (raw.includes('\\')) throw refuse('contains a backslash');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) throw refuse('is an absolute path');
  if (raw.split('/').includes('..')) throw refuse('has a ".." component (it would escape the destination)');
  return posix.normalize(raw).replace(/\/+$/, '').replace(/^\.$/, '');
}

/**
 * Refuses a symlink whose target resolves outside the destination (`dest` is absolute), naming the
 * entry: a later entry, or a later script, writing through it would land anywhere on the host.
 */
export function checkLinkTarget(fn: string, name: string, target: string, dest: string): void {
  const refuse = (why: string) =>
    new Error(
      `${fn}: entry ${JSON.stringify(name)} is a symlink to ${JSON.stringify(target)}, ${why}; nothing was extracted`,
    );
  if (target === '' || target.includes('\0')) throw refuse('an invalid target');
  if (isAbsolute(target)) {
    const inside = relative(dest, target);
    if (inside.startsWith('..') || isAbsolute(inside)) throw refuse('outside the destination');
    return;
  }
  const resolved = posix.normalize(posix.join(posix.dirname(name), target));
  if (resolved === '..' || resolved.startsWith('../')) throw refuse('outside the destination');
}

export interface Limits {
  maxBytes: number;
  maxEntries: number;
}

/** Defaults for extract: generous for software releases, far below what a bomb unpacks to. */
export const DEFAULT_LIMITS: Limits = { maxBytes: 1024 ** 3, maxEntries: 100_000 };

/** Counts entries and bytes against the limits; the error says which limit and how to raise it. */
export class Budget {
  private entries = 0;
  private bytes = 0;

  constructor(
    private readonly fn: string,
    private readonly src: string,
    private readonly limits: Limits,
    /** What the caller promises on failure: "; nothing was extracted". */
    private readonly outcome = '',
  ) {}

  /**
   * Bytes of tar data (after gunzip) the entries could take: their data, and headers and padding
   * generously counted. Zeros after the last entry are no entry, yet a gzip bomb of them would
   * still be inflated without this.
   */
  tarStreamCap(): number {
    return this.limits.maxBytes + this.limits.maxEntries * 4096 + 1024 * 1024;
  }

  entry(name: string): void {
    this.entries += 1;
    if (this.entries > this.limits.maxEntries)
      throw new Error(
        `${this.fn}: ${this.src} has more than ${this.limits.maxEntries} entries (at ${JSON.stringify(name)}); ` +
          `refused as a possible archive bomb${this.outcome} (raise opts.max_entries if it is expected)`,
      );
  }

  data(name: string, bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.limits.maxBytes)
      throw new Error(
        `${this.fn}: ${this.src} unpacks to more than ${formatBytes(this.limits.maxBytes)} (at ${JSON.stringify(name)}); ` +
          `refused as a possible archive bomb${this.outcome} (raise opts.max_bytes if it is expected)`,
      );
  }
}

/**
 * `archive.extract: /opt/app: permission denied`: the function, the path and the reason; an error
 * that already names the function (a refused entry, a limit) is kept as it is.
 */
export function archiveError(fn: string, path: string, error: unknown): Error {
  if (error instanceof Error && error.message.startsWith(`${fn}:`)) return error;
  return new Error(`${fn}: ${path}: ${fsReason(error)}`, { cause: error });
}

/** The hex SHA-256 of a stream of bytes (a file's, an entry's). */
export async function sha256(chunks: AsyncIterable<Buffer>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * One line per entry of what an archive holds, for comparing two: names, types, modes, contents
 * (by hash) and link targets. Times and owners are left out, so a file rewritten with the same
 * bytes does not make an archive "changed".
 */
export function manifestLine(
  entry: { name: string; type: string; mode: number; size: number; linkname?: string },
  hash = '',
): string {
  const what = entry.type === 'file' ? `${entry.size} ${hash}` : (entry.linkname ?? '');
  // Archivers end a directory's name with "/" or not.
  return `${entry.type} ${entry.mode.toString(8)} ${JSON.stringify(entry.name.replace(/\/+$/, ''))} ${what}`;
}
