import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConflictError, isProcessAlive, RunnerError, type Logger } from '@runner/plugin-sdk';
import { fsyncDir, removeIfExists, writeNewFileSynced } from './durable-fs.js';

/** What `<dataDir>/runner.lock` holds. */
export interface LockHolder {
  pid: number;
  started_at: string;
  hostname: string;
}

export interface LockInfo extends LockHolder {
  /** The lock file. */
  path: string;
  /**
   * False only when the holder ran on this host and its pid no longer exists. A lock written on
   * another host (a data directory on a network share) always counts as alive.
   */
  alive: boolean;
}

export interface DataDirLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Removes the lock file if it is still this process's. */
  release(): Promise<void>;
}

export function lockPath(dataDir: string): string {
  return join(dataDir, 'runner.lock');
}

function isAlive(holder: LockHolder): boolean {
  return holder.hostname !== hostname() || isProcessAlive(holder.pid);
}

function parseHolder(path: string, raw: string): LockHolder {
  try {
    const value = JSON.parse(raw) as Partial<LockHolder>;
    if (Number.isInteger(value.pid) && typeof value.hostname === 'string' && typeof value.started_at === 'string') {
      return value as LockHolder;
    }
  } catch {}
  throw new RunnerError(
    'lock_unreadable',
    `lock file ${path} does not hold {pid, started_at, hostname}; if no runner uses this data directory, remove it`,
    { details: { path } },
  );
}

async function readRaw(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Who holds the data directory, or null when nobody does. For the CLI: master or direct access. */
export async function readLockHolder(dataDir: string): Promise<LockInfo | null> {
  const path = lockPath(dataDir);
  const raw = await readRaw(path);
  if (raw === null) return null;
  const holder = parseHolder(path, raw);
  return { ...holder, path, alive: isAlive(holder) };
}

export function inUseError(dataDir: string, holder: LockHolder, path: string): ConflictError {
  const where = holder.hostname === hostname() ? '' : ` on host ${holder.hostname}`;
  return new ConflictError(
    `data directory ${dataDir} is in use by runner process ${holder.pid}${where} (lock ${path})`,
    { details: { pid: holder.pid, hostname: holder.hostname, started_at: holder.started_at, lock: path } },
  );
}

/**
 * Removes `path` only if it still holds `expected`: renamed aside (atomic), checked, and linked
 * back (link never overwrites) when it turned out to be someone else's. Used only for a takeover
 * marker left by a crashed process, where racing is already unlikely.
 */
async function removeIfUnchanged(path: string, expected: string): Promise<void> {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if ((await readRaw(aside)) !== expected) {
    try {
      await link(aside, path);
    } catch {}
  }
  await unlink(aside);
}

/**
 * Removes the stale lock `raw` while holding `runner.lock.takeover` (published with link, so only
 * one process holds it). Only a takeover holder ever deletes a lock it did not write, and a lock
 * is only replaced once deleted, so re-reading the lock under the marker and finding `raw` proves
 * the unlink removes the stale lock, not one a racing opener just took. Returns the live process
 * running a takeover, if another one is.
 */
async function removeStaleLock(
  dataDir: string,
  path: string,
  raw: string,
  temp: string,
): Promise<LockHolder | undefined> {
  const marker = `${path}.takeover`;
  for (let lap = 0; lap < 5; lap++) {
    try {
      await link(temp, marker);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const other = await readRaw(marker);
      if (other === null) continue;
      const holder = parseHolder(marker, other);
      if (isAlive(holder)) return holder;
      await removeIfUnchanged(marker, other); // left by a process that died mid-takeover
      continue;
    }
    try {
      if ((await readRaw(path)) === raw) {
        await unlink(path);
        await fsyncDir(dataDir);
      }
    } finally {
      await unlink(marker);
    }
    return undefined;
  }
  return undefined;
}

/**
 * Takes `<dataDir>/runner.lock`. The content is written to a private temp file (created with
 * O_EXCL) and published with link(2), which fails when the name exists: the lock is created
 * exclusively and nobody can ever read a half-written one. A lock whose process is gone is taken
 * over with a warning; of several openers racing for it, exactly one wins.
 */
export async function acquireLock(dataDir: string, logger: Logger): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = lockPath(dataDir);
  const holder: LockHolder = { pid: process.pid, started_at: new Date().toISOString(), hostname: hostname() };
  const content = `${JSON.stringify(holder)}\n`;
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeNewFileSynced(temp, Buffer.from(content));
  let tookOverFrom: LockHolder | undefined;
  try {
    // Each lap takes the lock, meets a live holder, or removes a stale lock.
    for (let lap = 0; lap < 20; lap++) {
      try {
        await link(temp, path);
        await fsyncDir(dataDir);
        if (tookOverFrom) {
          logger.warn(
            `took over the stale lock ${path}: runner process ${tookOverFrom.pid} (started ${tookOverFrom.started_at}) is gone`,
            { path, pid: tookOverFrom.pid },
          );
        }
        return {
          path,
          holder,
          release: async () => {
            if ((await readRaw(path)) !== content) {
              logger.warn(`lock ${path} no longer holds this process's entry; left in place`, { path });
              return;
            }
            await unlink(path);
            await fsyncDir(dataDir);
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const raw = await readRaw(path);
      if (raw === null) continue;
      const current = parseHolder(path, raw);
      if (isAlive(current)) throw inUseError(dataDir, current, path);
      const busy = await removeStaleLock(dataDir, path, raw, temp);
      // Another opener is taking the stale lock over right now; it will hold the directory.
      if (busy !== undefined) throw inUseError(dataDir, busy, path);
      tookOverFrom = current;
    }
    throw new ConflictError(`could not take the lock ${path}: other processes keep taking it`, { details: { path } });
  } finally {
    await removeIfExists(temp);
  }
}
