import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** One member of an archive; files are read from `source` when the stream reaches them. */
export type TarEntry =
  | { type: 'file'; path: string; mode: number; mtime: number; size: number; source: string | Buffer }
  | { type: 'dir'; path: string; mode: number; mtime: number }
  | { type: 'symlink'; path: string; mtime: number; target: string };

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL, as ustar wants.
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(
  name: string,
  typeflag: string,
  fields: { mode: number; size: number; mtime: number; linkname?: string; prefix?: string },
): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(fields.mode & 0o7777, 8), 100, 'latin1');
  block.write(octal(0, 8), 108, 'latin1');
  block.write(octal(0, 8), 116, 'latin1');
  block.write(octal(fields.size, 12), 124, 'latin1');
  block.write(octal(Math.max(0, Math.floor(fields.mtime)), 12), 136, 'latin1');
  block.write('        ', 148, 'latin1');
  block.write(typeflag, 156, 'latin1');
  if (fields.linkname) block.write(fields.linkname, 157, 100, 'utf8');
  block.write('ustar\0', 257, 'latin1');
  block.write('00', 263, 'latin1');
  if (fields.prefix) block.write(fields.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest);
}

/** A pax extended header carrying what ustar cannot hold (long paths and link targets). */
function paxHeader(records: Record<string, string>, mtime: number): Buffer {
  let body = '';
  for (const [key, value] of Object.entries(records)) {
    const content = ` ${key}=${value}\n`;
    // The length prefix counts itself: grow it until it is stable.
    let length = Buffer.byteLength(content) + 1;
    while (String(length).length + Buffer.byteLength(content) !== length) length += 1;
    body += `${length}${content}`;
  }
  const data = Buffer.from(body, 'utf8');
  return Buffer.concat([
    header('PaxHeader', 'x', { mode: 0o644, size: data.length, mtime }),
    data,
    padding(data.length),
  ]);
}

/** ustar's name/prefix split, or undefined when the path needs a pax header. */
function splitPath(path: string): { name: string; prefix?: string } | undefined {
  if (Buffer.byteLength(path) <= 100) return { name: path };
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== '') return { name, prefix };
  }
  return undefined;
}

function entryHeaders(entry: TarEntry, size: number): Buffer[] {
  const path = entry.type === 'dir' && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  const pax: Record<string, string> = {};
  let split = splitPath(path);
  if (!split) {
    pax.path = path;
    split = { name: path.slice(-100).replace(/^[^/]*\//, '') || 'long-name' };
  }
  let linkname: string | undefined;
  if (entry.type === 'symlink') {
    linkname = entry.target;
    if (Buffer.byteLength(linkname) > 100) {
      pax.linkpath = linkname;
      linkname = linkname.slice(0, 100);
    }
  }
  const typeflag = entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2';
  const mode = entry.type === 'symlink' ? 0o777 : entry.mode;
  const out: Buffer[] = [];
  if (Object.keys(pax).length > 0) out.push(paxHeader(pax, entry.mtime));
  out.push(header(split.name, typeflag, { mode, size, mtime: entry.mtime, linkname, prefix: split.prefix }));
  return out;
}

/**
 * A POSIX (ustar + pax) archive of `entries`, as a stream: GNU tar, bsdtar and busybox tar read
 * it. Owners are left out (uid/gid 0, no names), so extracting as any user yields its own files.
 */
export function tarStream(entries: Iterable<TarEntry>): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    for (const entry of entries) {
      if (entry.type !== 'file') {
        yield Buffer.concat(entryHeaders(entry, 0));
        continue;
      }
      const data = typeof entry.source === 'string' ? await readFile(entry.source) : entry.source;
      // A file that changed size since it was listed is archived as it is now.
      yield Buffer.concat([...entryHeaders(entry, data.length), data, padding(data.length)]);
    }
    yield Buffer.alloc(BLOCK * 2);
  }
  return Readable.from(generate(), { objectMode: false });
}
