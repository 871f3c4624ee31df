import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidInputError, RunnerError, type Migration } from '@runner/plugin-sdk';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { RECORD_HEADER_BYTES } from './journal.js';
import { storeLayout } from './layout.js';
import { readLockHolder } from './lock.js';
import { openStore, type OpenedStore } from './sql-store.js';

const opened: OpenedStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close({ snapshot: false })));
});

function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'store-test-'));
}

async function open(dataDir: string, options: { snapshotJournalBytes?: number; transactionTimeoutMs?: number } = {}) {
  const logger = recordingLogger();
  const store = await openStore(dataDir, logger, options);
  opened.push(store);
  return { store, logger };
}

const ITEMS: Migration[] = [
  {
    id: 1,
    description: 'items',
    sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, data BLOB, big)',
  },
];

function journals(dataDir: string): string[] {
  return readdirSync(storeLayout(dataDir).dir)
    .filter((n) => n.startsWith('journal-'))
    .sort();
}

function journalBytes(dataDir: string): number {
  return journals(dataDir).reduce((sum, n) => sum + statSync(join(storeLayout(dataDir).dir, n)).size, 0);
}

describe('writes and reads', () => {
  it('resolves a write with its changes and rowid, and reads it back', async () => {
    const { store } = await open(tempDataDir());
    await store.migrate('test', ITEMS);
    const result = await store.run('INSERT INTO items (name) VALUES (?)', ['a']);
    expect(result).toEqual({ changes: 1, lastInsertRowid: 1 });
    await store.run('INSERT INTO items (name) VALUES (:name)', { ':name': 'b' });
    expect(await store.get('SELECT name FROM items WHERE id = ?', [2])).toEqual({ name: 'b' });
    expect((await store.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name)).toEqual([
      'a',
      'b',
    ]);
    expect(await store.get('SELECT name FROM items WHERE id = 99')).toBeUndefined();
    const updated = await store.run('UPDATE items SET name = name || ?', ['!']);
    expect(updated.changes).toBe(2);
  });

  it('rejects a failing statement with the SQL error and journals nothing', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.run('INSERT INTO items (name) VALUES (?)', ['a']);
    const before = { bytes: journalBytes(dataDir), records: (await store.stats()).journalRecords };
    await expect(store.run('INSERT INTO nope VALUES (1)')).rejects.toThrow(/no such table: nope/);
    await expect(store.run('INSERT INTO items (name) VALUES (?)', ['a'])).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('UNIQUE constraint failed: items.name'),
    });
    expect(journalBytes(dataDir)).toBe(before.bytes);
    expect((await store.stats()).journalRecords).toBe(before.records);
  });

  it('rolls back a failing transaction completely, in memory and after a restart', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    const bytes = journalBytes(dataDir);
    await expect(
      store.transaction([
        { sql: 'INSERT INTO items (name) VALUES (?)', params: ['x'] },
        { sql: "UPDATE items SET name = 'y'" },
        { sql: 'INSERT INTO missing VALUES (1)' },
      ]),
    ).rejects.toThrow(/no such table: missing/);
    expect(await store.all('SELECT * FROM items')).toEqual([]);
    expect(journalBytes(dataDir)).toBe(bytes);
    const results = await store.transaction([
      { sql: 'INSERT INTO items (name) VALUES (?)', params: ['p'] },
      { sql: 'INSERT INTO items (name) VALUES (?)', params: ['q'] },
    ]);
    expect(results.map((r) => r.lastInsertRowid)).toEqual([1, 2]);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    expect((await again.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name)).toEqual([
      'p',
      'q',
    ]);
  });

  it('refuses writes through the read methods and transaction control through run', async () => {
    const { store } = await open(tempDataDir());
    await store.migrate('test', ITEMS);
    await store.run("INSERT INTO items (name) VALUES ('kept')");
    await expect(store.all('DELETE FROM items')).rejects.toThrow(
      'all() and get() only read; use run() or transaction()',
    );
    await expect(store.get("INSERT INTO items (name) VALUES ('sneaky')")).rejects.toThrow(InvalidInputError);
    await expect(store.run('BEGIN')).rejects.toThrow(InvalidInputError);
    await expect(store.transaction([{ sql: '  -- note\n COMMIT' }])).rejects.toThrow(/not allowed/);
    await expect(store.run('SELECT 1; DELETE FROM items')).rejects.toThrow(/one statement expected/);
    expect(await store.all('SELECT name FROM items')).toEqual([{ name: 'kept' }]);
  });

  it('acknowledges many concurrent writes, all of them durable', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => store.run('INSERT INTO items (name) VALUES (?)', [`n${i}`])),
    );
    expect(new Set(results.map((r) => r.lastInsertRowid)).size).toBe(300);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 300 });
  });

  it('refuses writes once closed', async () => {
    const { store } = await open(tempDataDir());
    await store.close();
    await expect(store.run('SELECT 1')).rejects.toMatchObject({ code: 'store_closed' });
    await expect(store.all('SELECT 1')).rejects.toThrow(/closed/);
  });
});

describe('interactive transactions', () => {
  const names = async (store: OpenedStore) =>
    (await store.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name);

  it('reads, decides and writes all or nothing, journalling only the writes', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    const before = (await store.stats()).journalRecords;
    const claimed = await store.withTransaction(async (tx) => {
      const free = await tx.get<{ n: number }>("SELECT count(*) AS n FROM items WHERE name = 'slot'");
      if (free?.n !== 0) return false;
      await tx.run("INSERT INTO items (name) VALUES ('slot')");
      // The transaction sees its own write.
      expect(await tx.all('SELECT name FROM items')).toEqual([{ name: 'slot' }]);
      return true;
    });
    expect(claimed).toBe(true);
    // A read-only transaction writes no record.
    expect(await store.withTransaction((tx) => tx.get("SELECT name FROM items WHERE name = 'slot'"))).toEqual({
      name: 'slot',
    });
    expect((await store.stats()).journalRecords).toBe(before + 1);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    expect(await names(again)).toEqual(['slot']);
  });

  it('rolls back when the work rejects, and after a failed statement even if the work caught it', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.run("INSERT INTO items (name) VALUES ('a')");
    await expect(
      store.withTransaction(async (tx) => {
        await tx.run("INSERT INTO items (name) VALUES ('b')");
        throw new Error('decided against it');
      }),
    ).rejects.toThrow('decided against it');
    await expect(
      store.withTransaction(async (tx) => {
        await tx.run("INSERT INTO items (name) VALUES ('c')");
        await tx.run("INSERT INTO items (name) VALUES ('a')").catch(() => undefined);
        return 'done';
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(await names(store)).toEqual(['a']);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    expect(await names(again)).toEqual(['a']);
  });

  it('holds other reads and writes until it ends, so none sees or mixes into its writes', async () => {
    const { store } = await open(tempDataDir());
    await store.migrate('test', ITEMS);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const transaction = store.withTransaction(async (tx) => {
      await tx.run("INSERT INTO items (name) VALUES ('in tx')");
      await held;
      order.push('tx commits');
    });
    await new Promise((resolve) => setImmediate(resolve));
    const write = store.run("INSERT INTO items (name) VALUES ('outside')").then(() => order.push('write'));
    const read = names(store).then((seen) => order.push(`read ${seen.join(',')}`));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    release();
    await Promise.all([transaction, write, read]);
    // Both went on after the commit; the read found the write issued before it, not a half transaction.
    expect(order[0]).toBe('tx commits');
    expect(order.slice(1).sort()).toEqual(['read in tx,outside', 'write']);
  });

  it('lets exactly one of several concurrent claims of the same slot win', async () => {
    const { store } = await open(tempDataDir());
    await store.migrate('test', ITEMS);
    const claim = (who: string) =>
      store.withTransaction(async (tx) => {
        if (await tx.get("SELECT 1 AS taken FROM items WHERE name LIKE 'slot:%'")) return false;
        await tx.run('INSERT INTO items (name) VALUES (?)', [`slot:${who}`]);
        return true;
      });
    const won = await Promise.all(['a', 'b', 'c', 'd'].map(claim));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await names(store)).toEqual([`slot:${['a', 'b', 'c', 'd'][won.indexOf(true)]}`]);
  });

  it('rolls back a transaction that holds the store too long and lets the waiting work go on', async () => {
    const { store } = await open(tempDataDir(), { transactionTimeoutMs: 200 });
    await store.migrate('test', ITEMS);
    // Waiting for the store itself inside its own transaction would wait for ever without the timeout.
    const stuck = store.withTransaction(async (tx) => {
      await tx.run("INSERT INTO items (name) VALUES ('never')");
      await store.run("INSERT INTO items (name) VALUES ('outside')");
    });
    await expect(stuck).rejects.toMatchObject({ code: 'transaction_timeout' });
    expect(await names(store)).toEqual(['outside']);
  });
});

describe('migrations', () => {
  const m1: Migration = { id: 1, description: 'a', sql: 'CREATE TABLE a (x); CREATE INDEX a_x ON a (x)' };
  const m2: Migration = { id: 2, description: 'b', sql: 'CREATE TABLE b (y)' };
  const m3: Migration = { id: 3, description: 'c', sql: 'ALTER TABLE b ADD COLUMN z' };

  it('applies pending migrations once, in order, per owner', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('one', [m1, m2]);
    await store.migrate('one', [m1, m2]);
    await store.migrate('one', [m1, m2, m3]);
    await store.migrate('two', [{ id: 1, description: 'other', sql: 'CREATE TABLE other (v)' }]);
    expect(await store.all('SELECT owner, id, description FROM _migrations ORDER BY owner, id')).toEqual([
      { owner: 'one', id: 1, description: 'a' },
      { owner: 'one', id: 2, description: 'b' },
      { owner: 'one', id: 3, description: 'c' },
      { owner: 'two', id: 1, description: 'other' },
    ]);
    expect(await store.all("SELECT name FROM pragma_table_info('b')")).toEqual([{ name: 'y' }, { name: 'z' }]);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    await again.migrate('one', [m1, m2, m3]);
    expect(await again.get("SELECT count(*) AS n FROM _migrations WHERE owner = 'one'")).toEqual({ n: 3 });
  });

  it('requires increasing ids', async () => {
    const { store } = await open(tempDataDir());
    await expect(store.migrate('one', [m2, m1])).rejects.toThrow(InvalidInputError);
    await expect(store.migrate('one', [m1, m1])).rejects.toThrow(/must increase: 1 follows 1/);
    const c3: Migration = { id: 3, description: 'c', sql: 'CREATE TABLE c3 (v)' };
    await store.migrate('one', [m1, c3]);
    await expect(store.migrate('one', [m1, m2, c3])).rejects.toThrow(
      /migration 2 \(b\) of one is older than the applied migration 3/,
    );
    expect(await store.all("SELECT name FROM sqlite_master WHERE name = 'b'")).toEqual([]);
  });

  it('keeps the migrations before a failing one and none of the failing one', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    const broken: Migration = {
      id: 2,
      description: 'broken',
      sql: 'CREATE TABLE half (v); INSERT INTO nowhere VALUES (1)',
    };
    await expect(store.migrate('one', [m1, broken, m3])).rejects.toMatchObject({
      code: 'migration_failed',
      message: expect.stringMatching(/migration 2 \(broken\) of one failed: no such table: nowhere/),
    });
    expect(await store.all('SELECT id FROM _migrations')).toEqual([{ id: 1 }]);
    expect(await store.all("SELECT name FROM sqlite_master WHERE name IN ('a', 'half')")).toEqual([{ name: 'a' }]);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    expect(await again.all('SELECT id FROM _migrations')).toEqual([{ id: 1 }]);
  });

  it('refuses transaction control inside a migration script', async () => {
    const { store } = await open(tempDataDir());
    await expect(
      store.migrate('one', [{ id: 1, description: 'x', sql: 'CREATE TABLE x (v); COMMIT; CREATE TABLE y (v)' }]),
    ).rejects.toThrow(/COMMIT.*controls the transaction/);
    expect(await store.all("SELECT name FROM sqlite_master WHERE name IN ('x', 'y')")).toEqual([]);
  });
});

describe('journal replay and snapshots', () => {
  it('replays the journal on restart, with blobs and bigints intact', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.run('INSERT INTO items (name, data, big) VALUES (?, ?, ?)', [
      'b',
      new Uint8Array([0, 255, 7]),
      2n ** 60n + 1n,
    ]);
    await store.run("UPDATE items SET name = 'renamed'");
    await store.close({ snapshot: false });
    expect(existsSync(storeLayout(dataDir).snapshot)).toBe(false);

    const { store: again } = await open(dataDir);
    const row = await again.get<{ name: string; data: Uint8Array; big: string }>(
      'SELECT name, data, CAST(big AS TEXT) AS big FROM items',
    );
    expect(row?.name).toBe('renamed');
    expect([...(row?.data ?? [])]).toEqual([0, 255, 7]);
    expect(row?.big).toBe(String(2n ** 60n + 1n));
    expect((await again.stats()).journalRecords).toBe(3);
  });

  it('leaves a journal no longer than snapshotAboveBytes at close, and folds a longer one', async () => {
    const dataDir = tempDataDir();
    const layout = storeLayout(dataDir);
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.run("INSERT INTO items (name) VALUES ('small')");
    const small = journalBytes(dataDir);
    await store.close({ snapshotAboveBytes: small });
    expect(existsSync(layout.snapshot)).toBe(false);
    expect(journalBytes(dataDir)).toBe(small);

    const { store: again } = await open(dataDir);
    expect(await again.all('SELECT name FROM items')).toEqual([{ name: 'small' }]);
    await again.run("INSERT INTO items (name) VALUES ('one more')");
    await again.close({ snapshotAboveBytes: small });
    expect(existsSync(layout.snapshot)).toBe(true);
    expect(journalBytes(dataDir)).toBe(0);
    const { store: third } = await open(dataDir);
    expect((await third.stats()).journalRecords).toBe(0);
    expect((await third.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name)).toEqual([
      'small',
      'one more',
    ]);
  });

  it('folds the journal into a snapshot and starts a new journal, losing nothing', async () => {
    const dataDir = tempDataDir();
    const layout = storeLayout(dataDir);
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    const writes = Array.from({ length: 200 }, (_, i) => store.run('INSERT INTO items (name) VALUES (?)', [`a${i}`]));
    const snapshot = store.snapshot();
    const more = Array.from({ length: 200 }, (_, i) => store.run('INSERT INTO items (name) VALUES (?)', [`b${i}`]));
    await Promise.all([...writes, snapshot, ...more]);
    expect(existsSync(layout.snapshot)).toBe(true);
    expect(journals(dataDir)).toEqual(['journal-00000002.log']);
    const stats = await store.stats();
    expect(stats.snapshotBytes).toBe(statSync(layout.snapshot).size);
    expect(stats.lastSnapshotAt).not.toBeNull();
    await store.run("INSERT INTO items (name) VALUES ('after')");
    expect((await store.stats()).journalRecords).toBe(stats.journalRecords + 1);
    expect(statSync(layout.journal(2)).size).toBeGreaterThan(0);
    await store.close({ snapshot: false });

    const { store: again } = await open(dataDir);
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 401 });
    await again.close();
    expect(journals(dataDir)).toEqual(['journal-00000003.log']);
    expect(statSync(join(layout.dir, 'journal-00000003.log')).size).toBe(0);
  });

  it('snapshots on its own when the journal outgrows store.snapshot_journal_bytes', async () => {
    const dataDir = tempDataDir();
    const { store, logger } = await open(dataDir, { snapshotJournalBytes: 8 * 1024 });
    await store.migrate('test', ITEMS);
    for (let i = 0; i < 100; i++) await store.run('INSERT INTO items (name) VALUES (?)', [`row ${i} `.repeat(40)]);
    // close waits for a snapshot under way; snapshot: false keeps close from taking its own.
    await store.close({ snapshot: false });
    expect(logger.lines.filter((l) => l.message.startsWith('snapshot ')).length).toBeGreaterThanOrEqual(2);
    expect(journals(dataDir).length).toBe(1);
    expect(Number(/\d+/.exec(journals(dataDir)[0])?.[0])).toBeGreaterThan(2);
    const { store: again } = await open(dataDir);
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 100 });
  });

  /**
   * one → snapshot S1 → two → snapshot S2 → three, keeping copies of S1, of the mark naming it and
   * of journal 2 before S2 removed it.
   */
  async function twoSnapshots(dataDir: string) {
    const layout = storeLayout(dataDir);
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.run("INSERT INTO items (name) VALUES ('one')");
    await store.snapshot();
    const s1 = readFileSync(layout.snapshot);
    const mark1 = readFileSync(layout.mark);
    await store.run("INSERT INTO items (name) VALUES ('two')");
    const journal2 = readFileSync(layout.journal(2));
    await store.snapshot();
    await store.run("INSERT INTO items (name) VALUES ('three')");
    await store.close({ snapshot: false });
    expect(journals(dataDir)).toEqual(['journal-00000003.log']);
    return { layout, s1, mark1, journal2 };
  }

  it('recovers from a crash before the snapshot rename: old image, old and new journals', async () => {
    const dataDir = tempDataDir();
    const { layout, s1, mark1, journal2 } = await twoSnapshots(dataDir);
    writeFileSync(layout.snapshot, s1);
    writeFileSync(layout.mark, mark1); // the crash came before S2 was marked
    writeFileSync(layout.journal(2), journal2);
    writeFileSync(layout.snapshotTemp, s1.subarray(0, 100)); // a half-written image, never to be read
    const { store } = await open(dataDir);
    expect((await store.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name)).toEqual([
      'one',
      'two',
      'three',
    ]);
    expect(existsSync(layout.snapshotTemp)).toBe(false);
    await store.run("INSERT INTO items (name) VALUES ('four')");
    await store.close();
    expect(journals(dataDir)).toEqual(['journal-00000004.log']);
    const { store: again } = await open(dataDir);
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 4 });
  });

  it('recovers from a crash after the rename but before the old journal was removed', async () => {
    const dataDir = tempDataDir();
    const { layout, journal2 } = await twoSnapshots(dataDir);
    writeFileSync(layout.journal(2), journal2); // records the new image already holds
    const { store } = await open(dataDir);
    // 'two' replayed twice would have hit the UNIQUE constraint and refused to start.
    expect((await store.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name)).toEqual([
      'one',
      'two',
      'three',
    ]);
  });

  it('refuses a journal that does not continue the snapshot', async () => {
    const dataDir = tempDataDir();
    const { layout, s1, mark1 } = await twoSnapshots(dataDir);
    writeFileSync(layout.snapshot, s1); // journal 2, which continued S1, is gone
    writeFileSync(layout.mark, mark1);
    await expect(openStore(dataDir, recordingLogger())).rejects.toMatchObject({
      code: 'journal_corrupt',
      message: expect.stringContaining('sequence 4, but the snapshot ends at 2: records are missing'),
    });
  });

  it('refuses a snapshot that is not an SQLite database, even without a mark to check it against', async () => {
    const dataDir = tempDataDir();
    const { layout } = await twoSnapshots(dataDir);
    writeFileSync(layout.snapshot, 'not a database');
    unlinkSync(layout.mark);
    await expect(openStore(dataDir, recordingLogger())).rejects.toThrow(
      `snapshot ${layout.snapshot} is not an SQLite database`,
    );
  });

  it('recovers from a journal cut in the middle of its last record, with a warning', async () => {
    const dataDir = tempDataDir();
    const layout = storeLayout(dataDir);
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    for (let i = 0; i < 9; i++) await store.run('INSERT INTO items (name) VALUES (?)', [`n${i}`]);
    await store.close({ snapshot: false });
    // The crash comes before the mark (written once a second) saw the last write.
    const mark = readFileSync(layout.mark);
    const { store: reopened } = await open(dataDir);
    await reopened.run("INSERT INTO items (name) VALUES ('n9')");
    await reopened.close({ snapshot: false });
    writeFileSync(layout.mark, mark);
    const path = layout.journal(1);
    const size = statSync(path).size;
    truncateSync(path, size - 7);

    const { store: again, logger } = await open(dataDir);
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 9 });
    const warning = logger.lines.find((l) => l.level === 'warn');
    expect(warning?.message).toMatch(new RegExp(`journal ${path}: dropped an incomplete last record at offset \\d+`));
    const offset = warning?.fields.offset as number;
    expect(statSync(path).size).toBe(offset);
    await again.run("INSERT INTO items (name) VALUES ('after')");
    await again.close({ snapshot: false });
    const { store: third, logger: quiet } = await open(dataDir);
    expect(await third.get("SELECT count(*) AS n FROM items WHERE name = 'after'")).toEqual({ n: 1 });
    expect(quiet.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('refuses to start on corruption before the last record, naming file and offset', async () => {
    const dataDir = tempDataDir();
    const layout = storeLayout(dataDir);
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    for (let i = 0; i < 10; i++) await store.run('INSERT INTO items (name) VALUES (?)', [`n${i}`]);
    await store.close({ snapshot: false });
    const path = layout.journal(1);
    const data = readFileSync(path);
    // Walk to the fourth record and flip a byte of its payload.
    let offset = 0;
    for (let i = 0; i < 3; i++) offset += RECORD_HEADER_BYTES + data.readUInt32LE(offset);
    data[offset + RECORD_HEADER_BYTES + 3] ^= 0x20;
    writeFileSync(path, data);

    const error = await openStore(dataDir, recordingLogger()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunnerError);
    expect(error).toMatchObject({ code: 'journal_corrupt', details: { path, offset } });
    expect((error as Error).message).toContain(`journal ${path} is corrupt at offset ${offset}`);
    // Refusing leaves the files alone and the data directory unlocked.
    expect(readFileSync(path)).toEqual(data);
    expect(await readLockHolder(dataDir)).toBeNull();
  });
});

describe('maintenance', () => {
  it('vacuums, snapshots and keeps the data', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.transaction(
      Array.from({ length: 500 }, (_, i) => ({
        sql: 'INSERT INTO items (name, data) VALUES (?, ?)',
        params: [`n${i}`, new Uint8Array(1000)],
      })),
    );
    await store.run('DELETE FROM items WHERE id > 10');
    const { bytesBefore, bytesAfter } = await store.vacuum();
    expect(bytesAfter).toBeLessThan(bytesBefore / 4);
    expect((await store.stats()).journalRecords).toBe(0);
    await store.close({ snapshot: false });
    const { store: again } = await open(dataDir);
    expect(await again.get('SELECT count(*) AS n FROM items')).toEqual({ n: 10 });
  });

  it('reports stats of snapshot, journal and tables', async () => {
    const dataDir = tempDataDir();
    const { store } = await open(dataDir);
    await store.migrate('test', ITEMS);
    await store.run("INSERT INTO items (name) VALUES ('a')");
    const stats = await store.stats();
    expect(stats).toMatchObject({
      path: storeLayout(dataDir).dir,
      snapshotBytes: 0,
      journalBytes: journalBytes(dataDir),
      journalRecords: 2,
      lastSnapshotAt: null,
      pageSize: 4096,
    });
    expect(stats.tables).toEqual([
      { name: '_migrations', rows: 1 },
      { name: '_store_meta', rows: 0 },
      { name: 'items', rows: 1 },
    ]);
    expect(stats.pageCount).toBeGreaterThan(0);
  });
});
