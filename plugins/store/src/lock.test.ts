import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError } from '@runner/plugin-sdk';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { acquireLock, lockPath, readLockHolder, type DataDirLock } from './lock.js';
import { openStore } from './sql-store.js';

const children: ChildProcess[] = [];
const locks: DataDirLock[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(locks.splice(0).map((l) => l.release()));
});

function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'store-lock-'));
}

async function livePid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  children.push(child);
  await once(child, 'spawn');
  return child.pid!;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

function writeLock(dataDir: string, pid: number, host = hostname()): string {
  const content = `${JSON.stringify({ pid, started_at: '2024-01-01T00:00:00.000Z', hostname: host })}\n`;
  writeFileSync(lockPath(dataDir), content);
  return content;
}

describe('data directory lock', () => {
  it('writes {pid, started_at, hostname} and removes it on release', async () => {
    const dataDir = tempDataDir();
    const lock = await acquireLock(dataDir, recordingLogger());
    const content = JSON.parse(readFileSync(lockPath(dataDir), 'utf8'));
    expect(content).toEqual({ pid: process.pid, started_at: expect.any(String), hostname: hostname() });
    expect(await readLockHolder(dataDir)).toEqual({ ...content, path: lockPath(dataDir), alive: true });
    await lock.release();
    expect(await readLockHolder(dataDir)).toBeNull();
    // Only the lock itself was in the directory: no temp or aside files left behind.
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('refuses a second opener with the holder pid and the lock path', async () => {
    const dataDir = tempDataDir();
    const store = await openStore(dataDir, recordingLogger());
    try {
      const error = await openStore(dataDir, recordingLogger()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as Error).message).toBe(
        `data directory ${dataDir} is in use by runner process ${process.pid} (lock ${join(dataDir, 'runner.lock')})`,
      );
    } finally {
      await store.close();
    }
  });

  it('refuses while another live process holds it, naming that pid', async () => {
    const dataDir = tempDataDir();
    const pid = await livePid();
    const content = writeLock(dataDir, pid);
    await expect(acquireLock(dataDir, recordingLogger())).rejects.toThrow(`is in use by runner process ${pid} (lock`);
    expect(readFileSync(lockPath(dataDir), 'utf8')).toBe(content);
  });

  it('counts a lock from another host as held: its pid cannot be checked from here', async () => {
    const dataDir = tempDataDir();
    writeLock(dataDir, await deadPid(), 'elsewhere.example');
    await expect(acquireLock(dataDir, recordingLogger())).rejects.toThrow(
      /runner process \d+ on host elsewhere\.example/,
    );
  });

  it('takes over a stale lock with a warning naming the dead pid', async () => {
    const dataDir = tempDataDir();
    const pid = await deadPid();
    writeLock(dataDir, pid);
    expect((await readLockHolder(dataDir))?.alive).toBe(false);
    const logger = recordingLogger();
    locks.push(await acquireLock(dataDir, logger));
    expect(JSON.parse(readFileSync(lockPath(dataDir), 'utf8')).pid).toBe(process.pid);
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining(`took over the stale lock ${lockPath(dataDir)}: runner process ${pid}`),
      }),
    ]);
  });

  it('lets exactly one of several racing openers take over a stale lock', async () => {
    for (let round = 0; round < 5; round++) {
      const dataDir = tempDataDir();
      writeLock(dataDir, await deadPid());
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, () => acquireLock(dataDir, recordingLogger())),
      );
      const won = results.filter((r): r is PromiseFulfilledResult<DataDirLock> => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      locks.push(won[0].value);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
      }
      expect(JSON.parse(readFileSync(lockPath(dataDir), 'utf8'))).toEqual(won[0].value.holder);
      expect(readdirSync(dataDir)).toEqual(['runner.lock']);
    }
  });

  it('leaves a lock that is no longer its own in place on release', async () => {
    const dataDir = tempDataDir();
    const logger = recordingLogger();
    const lock = await acquireLock(dataDir, logger);
    const other = writeLock(dataDir, await livePid());
    await lock.release();
    expect(readFileSync(lockPath(dataDir), 'utf8')).toBe(other);
    expect(logger.lines.at(-1)?.message).toMatch(/no longer holds this process's entry/);
  });

  it('names an unreadable lock file instead of guessing', async () => {
    const dataDir = tempDataDir();
    writeFileSync(lockPath(dataDir), 'garbage');
    await expect(acquireLock(dataDir, recordingLogger())).rejects.toMatchObject({
      code: 'lock_unreadable',
      message: expect.stringContaining(`lock file ${lockPath(dataDir)} does not hold`),
    });
  });
});
