import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { chmod, lstat, readdir, readlink, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';
import { ZipFile } from 'yazl';
import { archiveError, type ArchiveFormat, type EntryHeader, manifestLine, sha256 } from './entries.js';

/** An entry to archive: `path` is where it is on disk. */
export interface SourceEntry extends EntryHeader {
  path: string;
}

export interface CollectOptions {
  /** Entry names are relative to it; by default to each source's parent directory. */
  base?: string;
  followSymlinks: boolean;
  /** The archive being written, never archived into itself. */
  exclude: string;
}

export interface Collected {
  entries: SourceEntry[];
  /** Sockets, devices and fifos met on the way: not archived. */
  ignored: string[];
}

/** The entries for the sources, each directory before what it holds, its children sorted. */
export async function collectSources(fn: string, sources: string[], opts: CollectOptions): Promise<Collected> {
  const found: Collected = { entries: [], ignored: [] };
  const names = new Set<string>();
  for (const source of sources) {
    const path = resolve(source);
    const base = resolve(opts.base ?? dirname(path));
    const name = relative(base, path);
    if (name.startsWith('..') || isAbsolute(name))
      throw new Error(`${fn}: source ${source} is not inside opts.base ${base}`);
    await walk(fn, path, name.split('\\').join('/'), opts, found, new Set());
  }
  for (const entry of found.entries) {
    if (names.has(entry.name)) throw new Error(`${fn}: two sources give the entry ${JSON.stringify(entry.name)}`);
    names.add(entry.name);
  }
  return found;
}

async function walk(
  fn: string,
  path: string,
  name: string,
  opts: CollectOptions,
  found: Collected,
  stack: Set<string>,
) {
  if (path === opts.exclude) return;
  const st = await (opts.followSymlinks ? stat : lstat)(path).catch(failure(fn, path));
  const header = { name, mode: st.mode & 0o7777, mtime: st.mtime, size: 0 };
  if (st.isSymbolicLink())
    found.entries.push({ ...header, path, type: 'symlink', linkname: await readlink(path).catch(failure(fn, path)) });
  else if (st.isFile()) found.entries.push({ ...header, path, type: 'file', size: st.size });
  else if (st.isDirectory()) await walkDirectory(fn, path, name, st, opts, found, stack);
  else found.ignored.push(path);
}

async function walkDirectory(
  fn: string,
  path: string,
  name: string,
  st: Stats,
  opts: CollectOptions,
  found: Collected,
  stack: Set<string>,
) {
  // Followed symlinks may lead back up: a directory already being walked is a loop.
  const id = `${st.dev}:${st.ino}`;
  if (stack.has(id)) throw new Error(`${fn}: ${path}: a symlink loop (it leads back to a directory above it)`);
  if (name !== '')
    found.entries.push({ name, path, type: 'directory', mode: st.mode & 0o7777, mtime: st.mtime, size: 0 });
  const inner = new Set(stack).add(id);
  for (const child of (await readdir(path).catch(failure(fn, path))).sort())
    await walk(fn, join(path, child), name === '' ? child : `${name}/${child}`, opts, found, inner);
}

/** The manifest of what the sources would make: their files hashed. */
export async function sourceManifest(fn: string, entries: readonly SourceEntry[]): Promise<string[]> {
  const lines: string[] = [];
  for (const e of entries) {
    const hash = e.type === 'file' ? await sha256(createReadStream(e.path)).catch(failure(fn, e.path)) : undefined;
    lines.push(manifestLine(e, hash));
  }
  return lines;
}

/** A rejection handler raising `archive.create: /srv/x: permission denied`. */
function failure(fn: string, path: string) {
  return (error: unknown): never => {
    throw archiveError(fn, path, error);
  };
}

/**
 * Writes the archive to a temporary file beside dest, flushed, then renamed over it: dest holds
 * the old archive or the new one, never half of one. A replaced archive keeps its mode.
 */
export async function writeArchive(
  fn: string,
  format: ArchiveFormat,
  dest: string,
  entries: readonly SourceEntry[],
): Promise<void> {
  const mode = await stat(dest).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  const tmp = join(dirname(dest), `.${basename(dest)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // flush: fsynced before it closes, so a crash after the rename never leaves an empty archive.
    const out = createWriteStream(tmp, { flags: 'wx', mode: mode ?? 0o644, flush: true });
    await (format === 'zip' ? writeZip(entries, out) : writeTar(entries, format === 'tar.gz', out));
    if (mode !== undefined) await chmod(tmp, mode); // exactly, past the umask
    await rename(tmp, dest);
  } catch (error) {
    await rm(tmp, { force: true });
    throw archiveError(fn, dest, error);
  }
}

async function writeTar(entries: readonly SourceEntry[], gzip: boolean, out: Writable): Promise<void> {
  const pack = tarPack();
  // A streamx stream: it pipes into Node's streams as one of theirs would.
  const tar = pack as unknown as Readable;
  (gzip ? tar.pipe(createGzip()) : tar).pipe(out);
  const done = finished(out);
  // An output that fails (a full disk) stalls the pack stream: its entries would wait forever.
  const outputFailed = new Promise<never>((_, reject) => done.catch(reject));
  try {
    await Promise.race([addTarEntries(pack, entries), outputFailed]);
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
    out.destroy(error as Error);
    throw error;
  }
  await done;
}

async function addTarEntries(pack: Pack, entries: readonly SourceEntry[]): Promise<void> {
  for (const e of entries) await addTarEntry(pack, e);
}

function addTarEntry(pack: Pack, e: SourceEntry): Promise<void> {
  const header = { name: e.name, mode: e.mode, mtime: e.mtime, size: e.size, type: e.type, linkname: e.linkname };
  return new Promise((resolvePromise, reject) => {
    const settle = (error?: unknown) => (error ? reject(error) : resolvePromise());
    if (e.type !== 'file') return void pack.entry(header, settle);
    if (e.size === 0) return void pack.entry(header, Buffer.alloc(0), settle); // no stream ends it
    const sink = pack.entry(header, settle);
    // Exactly the bytes stat counted: a file that changed size meanwhile fails the entry (tar-stream
    // checks the length) rather than writing a header that lies.
    const source = createReadStream(e.path, { start: 0, end: e.size - 1 });
    source.on('error', (error) => {
      sink.destroy(error);
      reject(error);
    });
    source.pipe(sink);
  });
}

async function writeZip(entries: readonly SourceEntry[], out: Writable): Promise<void> {
  const zip = new ZipFile();
  const failed = new Promise<never>((_, reject) => zip.on('error', reject));
  for (const e of entries) {
    if (e.type === 'directory') zip.addEmptyDirectory(e.name, { mode: 0o040000 | e.mode, mtime: e.mtime });
    // The Info-ZIP convention: a symlink is an entry of type S_IFLNK whose data is its target.
    else if (e.type === 'symlink')
      zip.addBuffer(Buffer.from(e.linkname ?? ''), e.name, { mode: 0o120000 | e.mode, mtime: e.mtime });
    else if (e.size === 0) zip.addBuffer(Buffer.alloc(0), e.name, { mode: 0o100000 | e.mode, mtime: e.mtime });
    else
      zip.addReadStreamLazy(e.name, { mode: 0o100000 | e.mode, mtime: e.mtime, size: e.size }, (cb) => {
        // Opened when its turn comes (one file open at a time), exactly the bytes stat counted.
        const source = createReadStream(e.path, { start: 0, end: e.size - 1 });
        source.on('error', (error) => zip.emit('error', error));
        cb(null, source);
      });
  }
  zip.end();
  (zip.outputStream as Readable).pipe(out);
  await Promise.race([finished(out), failed]);
}
