import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidInputError, NotFoundError } from '@runner/plugin-sdk';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { storeLayout } from './layout.js';
import { readLockHolder } from './lock.js';
import { restoreDatabase } from './restore.js';
import { openStore, type OpenedStore } from './sql-store.js';

const opened: OpenedStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close({ snapshot: false })));
});

function temp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

async function open(dataDir: string): Promise<OpenedStore> {
  const store = await openStore(dataDir, recordingLogger());
  opened.push(store);
  return store;
}

async function names(dataDir: string): Promise<string[]> {
  const store = await open(dataDir);
  const rows = (await store.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name);
  await store.close();
  return rows;
}

/** A data directory with rows a, b backed up to `backup`, then c written after the backup. */
async function backedUp(compress: boolean) {
  const dataDir = temp('store-restore-');
  const backup = join(temp('store-backup-'), compress ? 'copy.db.gz' : 'copy.db');
  const store = await open(dataDir);
  await store.migrate('test', [
    { id: 1, description: 'items', sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)' },
  ]);
  await store.run("INSERT INTO items (name) VALUES ('a')");
  await store.run("INSERT INTO items (name) VALUES ('b')");
  const result = await store.backup(backup, { compress });
  await store.run("INSERT INTO items (name) VALUES ('c')");
  await store.close({ snapshot: false });
  return { dataDir, backup, result };
}

describe('backup and restore', () => {
  it('round-trips a plain backup, dropping what was written after it', async () => {
    const { dataDir, backup, result } = await backedUp(false);
    expect(result).toEqual({ path: backup, bytes: readFileSync(backup).length });
    expect(readFileSync(backup).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    expect(readdirSync(join(backup, '..'))).toEqual(['copy.db']); // no temp file left

    const restored = await restoreDatabase(dataDir, backup, {}, recordingLogger());
    const layout = storeLayout(dataDir);
    expect(restored.path).toBe(layout.snapshot);
    expect(readdirSync(layout.dir).filter((n) => n.startsWith('journal-'))).toEqual([]);
    expect(await readLockHolder(dataDir)).toBeNull();
    expect(await names(dataDir)).toEqual(['a', 'b']);
  });

  it('round-trips a compressed backup', async () => {
    const { dataDir, backup } = await backedUp(true);
    expect([...readFileSync(backup).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    await restoreDatabase(dataDir, backup, { decompress: true }, recordingLogger());
    expect(await names(dataDir)).toEqual(['a', 'b']);
    // Migrations restore with the data: applying them again changes nothing.
    const store = await open(dataDir);
    await store.migrate('test', [
      { id: 1, description: 'items', sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)' },
    ]);
    expect(await store.get('SELECT count(*) AS n FROM _migrations')).toEqual({ n: 1 });
  });

  it('suggests --decompress for a gzip file, and refuses --decompress for a plain one', async () => {
    const { dataDir, backup } = await backedUp(true);
    await expect(restoreDatabase(dataDir, backup, {}, recordingLogger())).rejects.toThrow(
      `${backup} is gzip-compressed; restore it with --decompress`,
    );
    const plain = join(temp('store-plain-'), 'plain.db');
    writeFileSync(plain, 'SQLite format 3\0');
    await expect(restoreDatabase(dataDir, plain, { decompress: true }, recordingLogger())).rejects.toThrow(
      /is not gzip-compressed; restore it without --decompress/,
    );
    expect(await names(dataDir)).toEqual(['a', 'b', 'c']);
  });

  it('refuses input that is not an SQLite database and leaves the current one untouched', async () => {
    const { dataDir } = await backedUp(false);
    const layout = storeLayout(dataDir);
    const journal = readFileSync(layout.journal(1));
    const dir = temp('store-bad-');
    const cases: [string, Buffer, boolean, RegExp][] = [
      ['text.db', Buffer.from('hello, not a database'), false, /is not an SQLite database/],
      ['text.db.gz', gzipSync('hello, not a database'), true, /is not an SQLite database/],
      ['broken.gz', Buffer.concat([gzipSync('x'.repeat(1000)).subarray(0, 20)]), true, /could not be decompressed/],
      [
        'header-only.db',
        Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(200, 7)]),
        false,
        /integrity check/,
      ],
    ];
    for (const [name, data, decompress, message] of cases) {
      const path = join(dir, name);
      writeFileSync(path, data);
      const error = await restoreDatabase(dataDir, path, { decompress }, recordingLogger()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(path);
    }
    expect(readFileSync(layout.journal(1))).toEqual(journal);
    // Nothing of the refused restores is left (mark.json is the store's own record of its files).
    expect(readdirSync(layout.dir).filter((f) => f !== 'mark.json')).toEqual(['journal-00000001.log']);
    await expect(restoreDatabase(dataDir, join(dir, 'absent.db'), {}, recordingLogger())).rejects.toThrow(
      NotFoundError,
    );
    expect(await names(dataDir)).toEqual(['a', 'b', 'c']);
  });

  it('refuses to restore while a runner process holds the data directory', async () => {
    const { dataDir, backup } = await backedUp(false);
    const store = await open(dataDir);
    const error = await restoreDatabase(dataDir, backup, {}, recordingLogger()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toBe(
      `cannot restore into ${dataDir} while runner process ${process.pid} uses it (lock ${join(dataDir, 'runner.lock')}); stop it first`,
    );
    expect(await store.all('SELECT name FROM items')).toHaveLength(3);
  });

  it('completes a restore that was interrupted after it was decided', async () => {
    const { dataDir, backup } = await backedUp(false);
    const layout = storeLayout(dataDir);
    copyFileSync(backup, layout.restore); // as if the process died right after the deciding rename
    const logger = recordingLogger();
    const store = await openStore(dataDir, logger);
    opened.push(store);
    expect((await store.all<{ name: string }>('SELECT name FROM items')).map((r) => r.name)).toEqual(['a', 'b']);
    expect(existsSync(layout.restore)).toBe(false);
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('completing the restore'))).toBe(true);
  });

  it('refuses a backup into the store directory or a missing directory', async () => {
    const dataDir = temp('store-restore-');
    const store = await open(dataDir);
    await expect(store.backup(storeLayout(dataDir).snapshot)).rejects.toThrow(/is inside the store directory/);
    await expect(store.backup(join(dataDir, 'nowhere', 'x.db'))).rejects.toThrow(NotFoundError);
    await expect(store.backup('')).rejects.toThrow(InvalidInputError);
  });
});
