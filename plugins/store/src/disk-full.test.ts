import { mkdtempSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { canMount, fillFileSystem, mountTmpfs } from '../../../test/support/tmpfs.js';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { openStore } from './sql-store.js';

const unmounts: (() => void)[] = [];
afterAll(() => {
  for (const unmount of unmounts) unmount();
});

describe.skipIf(!canMount)('a full file system', () => {
  it('holds the batch that met it, refuses new writes, and lands the batch once space is back', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-full-'));
    unmounts.push(mountTmpfs(dataDir, '2m'));
    const conditions: (string | null)[] = [];
    const store = await openStore(dataDir, recordingLogger(), { onCondition: (reason) => conditions.push(reason) });
    await store.migrate('test', [{ id: 1, description: 'items', sql: 'CREATE TABLE items (name TEXT NOT NULL)' }]);
    const filler = fillFileSystem(dataDir);
    // Big enough to need a page the file system no longer has.
    const waiting = store.run('INSERT INTO items (name) VALUES (?)', ['x'.repeat(64 * 1024)]);
    let landed = false;
    void waiting.then(() => (landed = true));
    for (let i = 0; i < 600 && conditions.length === 0; i++) await sleep(50);
    expect(conditions).toEqual([expect.stringContaining('file system is full')]);
    await expect(store.run("INSERT INTO items (name) VALUES ('refused')")).rejects.toMatchObject({
      code: 'store_disk_full',
      status: 503,
      message: expect.stringContaining(`the file system holding the store ${join(dataDir, 'store')} is full (ENOSPC)`),
    });
    // Reads answer, and see the waiting write (applied in memory, like any write before its fsync).
    expect(await store.get('SELECT count(*) AS n FROM items')).toEqual({ n: 1 });
    expect(landed).toBe(false);

    unlinkSync(filler);
    await waiting;
    expect(conditions).toEqual([expect.stringContaining('file system is full'), null]);
    await store.run("INSERT INTO items (name) VALUES ('after')");
    await store.close();
    const again = await openStore(dataDir, recordingLogger());
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 2 });
    await again.close();
  });

  it('fails the waiting writes when closed while full, and exits', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-full-close-'));
    unmounts.push(mountTmpfs(dataDir, '2m'));
    const store = await openStore(dataDir, recordingLogger());
    await store.migrate('test', [{ id: 1, description: 'items', sql: 'CREATE TABLE items (name TEXT NOT NULL)' }]);
    await store.run("INSERT INTO items (name) VALUES ('kept')");
    const filler = fillFileSystem(dataDir);
    const waiting = store.run('INSERT INTO items (name) VALUES (?)', ['x'.repeat(64 * 1024)]).catch((e: Error) => e);
    await sleep(100);
    await store.close();
    expect(await waiting).toMatchObject({ code: 'store_failed' });
    unlinkSync(filler);
    const again = await openStore(dataDir, recordingLogger());
    expect(await again.get("SELECT count(*) AS n FROM items WHERE name = 'kept'")).toEqual({ n: 1 });
    await again.close();
  });
});
