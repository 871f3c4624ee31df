import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import { getFileNameLowLevel, openPromise, type Entry as ZipEntry, type ZipFile } from 'yauzl';
import {
  archiveError,
  type ArchiveFormat,
  type Budget,
  type EntryType,
  formatOfBytes,
  formatOfName,
} from './entries.js';

/** An entry as stored: its name not yet checked (list shows it as it is; extract checks it). */
export interface RawEntry {
  name: string;
  type: EntryType | 'character-device' | 'block-device' | 'fifo' | 'other';
  mode: number;
  size: number;
  mtime: Date;
  linkname?: string;
  /** The entry's bytes (files only): read at most once, before asking for the next entry. */
  data(): AsyncIterable<Buffer>;
}

/** opts.format, else the file's first bytes, else its name. */
export async function detectFormat(fn: string, path: string, given?: string): Promise<ArchiveFormat> {
  if (given) return given as ArchiveFormat;
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await handle.read(head, 0, 512, 0);
    const format = formatOfBytes(head.subarray(0, bytesRead)) ?? formatOfName(path);
    if (!format) throw new Error(`${fn}: ${path} is not a tar, tar.gz or zip archive (give opts.format to say which)`);
    return format;
  } finally {
    await handle.close();
  }
}

/** The entries of the archive in order, each counted against the budget before it is handed out. */
export function readArchive(fn: string, path: string, format: ArchiveFormat, budget: Budget): AsyncGenerator<RawEntry> {
  return format === 'zip' ? zipEntries(fn, path, budget) : tarEntries(fn, path, format === 'tar.gz', budget);
}

const TAR_TYPES: Readonly<Record<string, RawEntry['type']>> = {
  file: 'file',
  'contiguous-file': 'file',
  directory: 'directory',
  symlink: 'symlink',
  link: 'link',
  'character-device': 'character-device',
  'block-device': 'block-device',
  fifo: 'fifo',
};

async function* tarEntries(fn: string, path: string, gzip: boolean, budget: Budget): AsyncGenerator<RawEntry> {
  const source = createReadStream(path);
  const extract = tarExtract();
  const fail = (error: Error) => extract.destroy(archiveError(fn, path, error));
  source.on('error', fail);
  let input: Readable = source;
  if (gzip) {
    const gunzip = createGunzip();
    gunzip.on('error', fail);
    input = source.pipe(gunzip);
  }
  const capped = input.pipe(byteCap(budget.tarStreamCap(), fail));
  capped.pipe(extract);
  try {
    for await (const entry of extract) {
      // pax and GNU long-name headers are applied by tar-stream, never handed out as entries.
      const h = entry.header;
      const type = TAR_TYPES[h.type ?? 'file'] ?? 'other';
      budget.entry(h.name);
      if (type === 'file') budget.data(h.name, h.size ?? 0);
      yield {
        name: h.name,
        type,
        mode: (h.mode ?? 0o644) & 0o7777,
        size: h.size ?? 0,
        mtime: h.mtime ?? new Date(0),
        linkname: h.linkname ?? undefined,
        data: () => entry as AsyncIterable<Buffer>,
      };
      entry.resume(); // an entry the caller did not read is skipped over
    }
  } finally {
    source.destroy();
  }
}

/** Passes bytes through, failing once more than `cap` have passed. */
function byteCap(cap: number, fail: (error: Error) => void): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > cap) {
        const error = new Error(`more than ${cap} bytes of tar data; refused as a possible archive bomb`);
        fail(error);
        return done(error);
      }
      done(null, chunk);
    },
  });
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
/** "Version made by" of zips written on Unix, whose external attributes hold st_mode. */
const MADE_ON_UNIX = 3;
/** A symlink's target is its data; longer than any path is no target. */
const MAX_LINK_TARGET = 4096;

async function* zipEntries(fn: string, path: string, budget: Budget): AsyncGenerator<RawEntry> {
  let zip: ZipFile;
  try {
    // Names are decoded here (not by yauzl, which would refuse `..` with an error of its own), so
    // that extract refuses them as it refuses a tar's and list shows them as they are.
    zip = await openPromise(path, { decodeStrings: false, validateEntrySizes: true, autoClose: false });
  } catch (error) {
    throw archiveError(fn, path, error);
  }
  try {
    for await (const entry of zip.eachEntry()) {
      const name = getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false);
      budget.entry(name);
      if (entry.isEncrypted()) throw new Error(`${fn}: ${path}: entry ${JSON.stringify(name)} is encrypted`);
      const unixMode = entry.versionMadeBy >> 8 === MADE_ON_UNIX ? entry.externalFileAttributes >>> 16 : 0;
      const type = zipType(name, unixMode);
      if (type === 'file') budget.data(name, entry.uncompressedSize);
      const data = () => zipData(fn, path, zip, entry);
      yield {
        name,
        type,
        mode: unixMode & 0o7777 || (type === 'directory' ? 0o755 : 0o644),
        size: entry.uncompressedSize,
        mtime: entry.getLastModDate(),
        linkname: type === 'symlink' ? await linkTarget(fn, name, entry, data) : undefined,
        data,
      };
    }
  } catch (error) {
    throw archiveError(fn, path, error);
  } finally {
    zip.close();
  }
}

function zipType(name: string, unixMode: number): RawEntry['type'] {
  if (name.endsWith('/') || (unixMode & S_IFMT) === S_IFDIR) return 'directory';
  if ((unixMode & S_IFMT) === S_IFLNK) return 'symlink';
  return 'file';
}

async function* zipData(fn: string, path: string, zip: ZipFile, entry: ZipEntry): AsyncGenerator<Buffer> {
  // yauzl checks the inflated size against the declared one as it reads (validateEntrySizes), so
  // the budget counted from the declaration holds.
  const stream = await zip.openReadStreamPromise(entry);
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (error) {
    throw archiveError(fn, path, error);
  }
}

async function linkTarget(fn: string, name: string, entry: ZipEntry, data: () => AsyncIterable<Buffer>) {
  if (entry.uncompressedSize > MAX_LINK_TARGET)
    throw new Error(`${fn}: entry ${JSON.stringify(name)} is a symlink with a ${entry.uncompressedSize}-byte target`);
  const chunks: Buffer[] = [];
  for await (const chunk of data()) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}
