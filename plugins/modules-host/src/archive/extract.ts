import { createReadStream, type Stats } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readlink, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type ArchiveFormat,
  Budget,
  checkLinkTarget,
  type EntryHeader,
  type Limits,
  safeEntryName,
  sha256,
} from './entries.js';
import { readArchive, type RawEntry } from './read.js';

/** An entry that will be (or would be) written to the destination. */
export type Update = EntryHeader & { type: 'file' | 'directory' | 'symlink' };

export interface ExtractPlan {
  /** Entries in the archive (after duplicates: a later entry of a name replaces an earlier one). */
  entries: number;
  /** Those that differ from what the destination holds, by name (so parents come first). */
  updates: Update[];
}

const NOTHING = '; nothing was extracted';

/** Where the entries are staged (null in dry-run: only compared) and what is already on disk. */
interface Scan {
  fn: string;
  dest: string;
  stage: string | null;
  budget: Budget;
  /** Names of symlink entries: nothing is written through one. */
  symlinks: Set<string>;
  /** File entries' sizes and hashes, for hard links to them. */
  files: Map<string, { size: number; hash: string; mode: number }>;
  /** Directories of dest already checked to be real directories. */
  checkedDirs: Set<string>;
}

/**
 * Reads every entry of the archive, refusing any that would land outside dest, and compares it
 * with what dest holds: a file by size, mode and SHA-256 of its content; a directory by mode; a
 * symlink by target. Unless dry-run (stage null), entries are written under stage as they are read,
 * so that a refusal or a limit met halfway leaves dest untouched.
 */
export async function planExtract(
  fn: string,
  src: string,
  format: ArchiveFormat,
  dest: string,
  limits: Limits,
  stage: string | null,
): Promise<ExtractPlan> {
  const scan: Scan = {
    fn,
    dest,
    stage,
    budget: new Budget(fn, src, limits, NOTHING),
    symlinks: new Set(),
    files: new Map(),
    checkedDirs: new Set(),
  };
  const seen = new Map<string, Update | null>();
  for await (const raw of readArchive(fn, src, format, scan.budget)) {
    const name = safeEntryName(fn, raw.name);
    if (name === '') continue; // "./", dest itself
    seen.delete(name);
    seen.set(name, await scanEntry(scan, name, raw));
  }
  const updates = [...seen.values()].filter((u): u is Update => u !== null);
  return { entries: seen.size, updates: updates.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}

/** The entry's update, or null when dest already holds it. */
async function scanEntry(scan: Scan, name: string, raw: RawEntry): Promise<Update | null> {
  const { fn } = scan;
  for (const link of scan.symlinks)
    if (name.startsWith(`${link}/`))
      throw new Error(
        `${fn}: entry ${JSON.stringify(name)} would be written through the symlink entry ${JSON.stringify(link)}${NOTHING}`,
      );
  const current = await destState(scan, name);
  const header = { name, mode: raw.mode, mtime: raw.mtime, size: raw.size };
  if (current?.isDirectory() && raw.type !== 'directory')
    throw new Error(
      `${fn}: entry ${JSON.stringify(name)} is a ${raw.type} but ${join(scan.dest, name)} is a directory (remove it first)${NOTHING}`,
    );
  switch (raw.type) {
    case 'directory':
      return scanDirectory(scan, { ...header, type: 'directory' }, current);
    case 'symlink':
      return scanSymlink(scan, { ...header, type: 'symlink', linkname: raw.linkname ?? '' }, current);
    case 'file':
      return scanFile(scan, { ...header, type: 'file' }, current, raw.data());
    case 'link':
      return scanHardLink(scan, { ...header, type: 'file' }, current, raw.linkname ?? '');
    default:
      throw new Error(
        `${fn}: entry ${JSON.stringify(name)} is a ${raw.type}, which archive.extract does not create${NOTHING}`,
      );
  }
}

/**
 * What dest holds at the entry's place (lstat: a symlink there is replaced, not followed), after
 * checking that every directory above it is a real directory: writing through a symlink in dest
 * could put the entry anywhere on the host.
 */
async function destState(scan: Scan, name: string): Promise<Stats | undefined> {
  const parts = name.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    if (scan.checkedDirs.has(dir)) continue;
    const st = await lstatOrUndefined(join(scan.dest, dir));
    if (st?.isSymbolicLink())
      throw new Error(
        `${scan.fn}: entry ${JSON.stringify(name)} would be written through the symlink ${join(scan.dest, dir)}${NOTHING}`,
      );
    if (st && !st.isDirectory())
      throw new Error(
        `${scan.fn}: entry ${JSON.stringify(name)} needs ${join(scan.dest, dir)} to be a directory, but it is a file${NOTHING}`,
      );
    if (st) scan.checkedDirs.add(dir);
  }
  return lstatOrUndefined(join(scan.dest, name));
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  return lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
}

async function scanDirectory(scan: Scan, entry: Update, current: Stats | undefined): Promise<Update | null> {
  if (current && !current.isDirectory())
    throw new Error(
      `${scan.fn}: entry ${JSON.stringify(entry.name)} is a directory but ${join(scan.dest, entry.name)} is not (remove it first)${NOTHING}`,
    );
  // Modes are applied when committing, deepest first: a read-only directory must still take its files.
  if (scan.stage) await mkdir(join(scan.stage, entry.name), { recursive: true });
  return current && (current.mode & 0o7777) === entry.mode ? null : entry;
}

async function scanSymlink(scan: Scan, entry: Update, current: Stats | undefined): Promise<Update | null> {
  checkLinkTarget(scan.fn, entry.name, entry.linkname!, scan.dest);
  scan.symlinks.add(entry.name);
  if (scan.stage) {
    const at = join(scan.stage, entry.name);
    await mkdir(dirname(at), { recursive: true });
    await rm(at, { force: true });
    await symlink(entry.linkname!, at);
  }
  const same = current?.isSymbolicLink() && (await readlink(join(scan.dest, entry.name))) === entry.linkname;
  return same ? null : entry;
}

async function scanFile(
  scan: Scan,
  entry: Update,
  current: Stats | undefined,
  data: AsyncIterable<Buffer>,
): Promise<Update | null> {
  const { size, hash } = await stageData(scan, entry, data);
  scan.files.set(entry.name, { size, hash, mode: entry.mode });
  return (await sameFile(scan, entry.name, current, size, hash, entry.mode)) ? null : entry;
}

/** A tar hard link: a copy of the earlier file entry it names. */
async function scanHardLink(scan: Scan, entry: Update, current: Stats | undefined, linkname: string) {
  const targetName = safeEntryName(scan.fn, linkname);
  const target = scan.files.get(targetName);
  if (!target)
    throw new Error(
      `${scan.fn}: entry ${JSON.stringify(entry.name)} is a hard link to ${JSON.stringify(linkname)}, which is no earlier file of the archive${NOTHING}`,
    );
  scan.budget.data(entry.name, target.size);
  if (scan.stage) {
    const at = join(scan.stage, entry.name);
    await mkdir(dirname(at), { recursive: true });
    await copyFile(join(scan.stage, targetName), at);
    await chmod(at, entry.mode);
  }
  scan.files.set(entry.name, { ...target, mode: entry.mode });
  const same = await sameFile(scan, entry.name, current, target.size, target.hash, entry.mode);
  return same ? null : { ...entry, size: target.size };
}

/**
 * Hashes the entry's bytes and writes them under stage. The budget counted the declared size
 * already; the readers hold an entry to it (tar-stream reads that many bytes, yauzl checks).
 */
async function stageData(scan: Scan, entry: Update, data: AsyncIterable<Buffer>) {
  const handle = scan.stage ? await openStaged(join(scan.stage, entry.name)) : undefined;
  let size = 0;
  try {
    const hash = await sha256(
      (async function* counted() {
        for await (const chunk of data) {
          size += chunk.length;
          await handle?.write(chunk);
          yield chunk;
        }
      })(),
    );
    // The exact mode (the umask does not apply) and the archive's time.
    await handle?.chmod(entry.mode);
    await handle?.utimes(entry.mtime, entry.mtime);
    return { size, hash };
  } finally {
    await handle?.close();
  }
}

async function openStaged(path: string) {
  await mkdir(dirname(path), { recursive: true });
  await rm(path, { force: true }); // a duplicate entry replaces the earlier one
  return open(path, 'wx', 0o600);
}

async function sameFile(
  scan: Scan,
  name: string,
  current: Stats | undefined,
  size: number,
  hash: string,
  mode: number,
) {
  if (!current?.isFile() || current.size !== size || (current.mode & 0o7777) !== mode) return false;
  return (await sha256(createReadStream(join(scan.dest, name)))) === hash;
}

/**
 * Moves the staged updates into dest. When dest did not exist the stage (beside it) becomes dest
 * in one rename; otherwise (the stage is inside dest, on its file system) each changed entry is
 * renamed over its place, so a reader sees a file's old or new content, never half of it.
 */
export async function commitExtract(plan: ExtractPlan, stage: string, dest: string, destExists: boolean) {
  const directories = plan.updates.filter((u) => u.type === 'directory').reverse();
  if (!destExists) {
    for (const d of directories) await chmod(join(stage, d.name), d.mode);
    await rename(stage, dest);
    return;
  }
  for (const u of plan.updates) {
    const at = join(dest, u.name);
    await mkdir(u.type === 'directory' ? at : dirname(at), { recursive: true });
    if (u.type !== 'directory') await rename(join(stage, u.name), at);
  }
  for (const d of directories) await chmod(join(dest, d.name), d.mode);
}
