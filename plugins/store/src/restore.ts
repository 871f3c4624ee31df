import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ConflictError, InvalidInputError, NotFoundError, type Logger } from '@runner/plugin-sdk';
import { fsyncDir, removeIfExists } from './durable-fs.js';
import { listJournals, storeLayout, type StoreLayout } from './layout.js';
import { acquireLock, readLockHolder } from './lock.js';
import { hasSqliteHeader, loadSqlJs } from './sqljs.js';

/**
 * Finishes installing `restore.db`. Journals (and the mark) go first: they belong to the database being replaced
 * and must never be replayed onto the restored one. While `restore.db` exists, start-up calls this
 * again, so a crash between the steps only repeats them.
 */
export async function completeRestore(layout: StoreLayout): Promise<void> {
  for (const journal of await listJournals(layout)) await unlink(journal.path);
  // The mark describes the replaced files; the restored one starts a new mark at its first open.
  await removeIfExists(layout.mark);
  await fsyncDir(layout.dir);
  await rename(layout.restore, layout.snapshot);
  await fsyncDir(layout.dir);
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function checkDatabase(input: string, path: string): Promise<void> {
  if (!hasSqliteHeader(await readHead(path, 16))) {
    throw new InvalidInputError(`${input} is not an SQLite database (it does not start with "SQLite format 3")`, {
      field: 'path',
    });
  }
  const SQL = await loadSqlJs();
  let problem: string | undefined;
  try {
    const db = new SQL.Database(await readFile(path));
    try {
      const result = db.exec('PRAGMA quick_check');
      const first = String(result[0]?.values[0]?.[0] ?? 'no answer');
      if (first !== 'ok') problem = first;
    } finally {
      db.close();
    }
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  if (problem !== undefined) {
    throw new InvalidInputError(`${input} fails SQLite's integrity check: ${problem}`, { field: 'path' });
  }
}

/**
 * Installs a backup as the data directory's database: the input is copied (gunzipped when
 * `decompress`) into a temp file in the store directory, checked, then installed by rename. The
 * journal of the replaced database is removed. Refused while a live process holds the lock.
 */
export async function restoreDatabase(
  dataDir: string,
  inputPath: string,
  options: { decompress?: boolean },
  logger: Logger,
): Promise<{ path: string; bytes: number }> {
  const input = resolve(inputPath);
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new NotFoundError(`backup file ${input} does not exist`);
    throw error;
  });
  if (!info.isFile()) throw new InvalidInputError(`${input} is not a file`, { field: 'path' });
  const holder = await readLockHolder(dataDir);
  if (holder?.alive) {
    throw new ConflictError(
      `cannot restore into ${dataDir} while runner process ${holder.pid} uses it (lock ${holder.path}); stop it first`,
      { details: { pid: holder.pid, lock: holder.path } },
    );
  }
  const lock = await acquireLock(dataDir, logger);
  const layout = storeLayout(dataDir);
  try {
    await mkdir(layout.dir, { recursive: true, mode: 0o700 });
    await removeIfExists(layout.restoreTemp);
    const head = await readHead(input, 2);
    const gzip = head.length === 2 && head[0] === 0x1f && head[1] === 0x8b;
    if (gzip && !options.decompress) {
      throw new InvalidInputError(`${input} is gzip-compressed; restore it with --decompress`, { field: 'path' });
    }
    if (!gzip && options.decompress) {
      throw new InvalidInputError(`${input} is not gzip-compressed; restore it without --decompress`, {
        field: 'path',
      });
    }
    try {
      const source = createReadStream(input);
      const target = createWriteStream(layout.restoreTemp, { flags: 'wx', mode: 0o600 });
      await (options.decompress ? pipeline(source, createGunzip(), target) : pipeline(source, target));
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith('Z_')) {
        throw new InvalidInputError(`${input} could not be decompressed: ${(error as Error).message}`, {
          field: 'path',
          cause: error,
        });
      }
      throw error;
    }
    await syncFile(layout.restoreTemp);
    await checkDatabase(input, layout.restoreTemp);
    const { size } = await stat(layout.restoreTemp);
    // From this rename on, the restore is decided: start-up completes it if we crash.
    await rename(layout.restoreTemp, layout.restore);
    await fsyncDir(layout.dir);
    await completeRestore(layout);
    logger.info(`restored ${layout.snapshot} from ${input}`, { input, bytes: size });
    return { path: layout.snapshot, bytes: size };
  } catch (error) {
    await removeIfExists(layout.restoreTemp).catch(() => undefined);
    throw error;
  } finally {
    await lock.release();
  }
}
