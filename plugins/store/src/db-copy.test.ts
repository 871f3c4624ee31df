// `runner db copy` and the logical backup, across the two backends: the embedded store in temp
// data directories and PostgreSQL in databases of this file's own.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidInputError, type Store, type StoreSchema } from '@runner/plugin-sdk';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../../test/support/postgres.js';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { copyStore, listTables, tableReport, type TableReport } from './db-copy.js';
import { restoreInto } from './logical-backup.js';
import { PostgresStore } from './pg-store.js';
import { restoreDatabase } from './restore.js';
import { openStore } from './sql-store.js';

const SCHEMAS: StoreSchema[] = [
  {
    owner: 'shop',
    migrations: [
      {
        id: 1,
        description: 'items and their parts',
        sql: `CREATE TABLE shelves (name TEXT PRIMARY KEY);
              CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, shelf TEXT NOT NULL REFERENCES shelves(name),
                                  name TEXT NOT NULL, size INTEGER, ratio REAL, data BLOB);`,
      },
      {
        id: 2,
        description: 'tags (two-column key) and notes (no key)',
        sql: `CREATE TABLE tags (item INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (item, tag));
              CREATE TABLE notes (body TEXT);`,
      },
    ],
  },
];
/** More than a page (2,000) of items, so the copy and the checksum page through them. */
const ITEMS = 4_500;

const logger = recordingLogger();
const databases: TestDatabase[] = [];
const closers: (() => Promise<void>)[] = [];

async function embedded(): Promise<Store> {
  const store = await openStore(mkdtempSync(join(tmpdir(), 'db-copy-')), logger);
  closers.push(() => store.close({ snapshot: false }));
  return store;
}

async function postgres(): Promise<Store> {
  const db = createTestDatabase('db_copy');
  databases.push(db);
  const store = await PostgresStore.open({ url: db.url, poolSize: 4 }, logger);
  closers.push(() => store.close());
  return store;
}

/** A store with every kind of value, key and reference the copy must carry. */
async function filled(): Promise<Store> {
  const store = await embedded();
  for (const schema of SCHEMAS) await store.migrate(schema.owner, schema.migrations);
  await store.transaction([
    { sql: "INSERT INTO shelves (name) VALUES ('a'), ('b'), ('Ä ünïcode')" },
    ...Array.from({ length: ITEMS }, (_, i) => ({
      sql: 'INSERT INTO items (shelf, name, size, ratio, data) VALUES (?, ?, ?, ?, ?)',
      params: [
        i % 3 === 0 ? 'Ä ünïcode' : 'a',
        `item ${i} "quoted" 'single'`,
        i % 7 === 0 ? null : 2 ** 40 + i,
        i / 3,
        i % 5 === 0 ? new Uint8Array([0, 255, i % 256]) : null,
      ],
    })),
    { sql: "INSERT INTO tags (item, tag) VALUES (1, 'x'), (1, 'y'), (2, 'x')" },
    { sql: "INSERT INTO notes (body) VALUES ('one'), ('one'), (NULL)" },
  ]);
  return store;
}

const reports = async (store: Store): Promise<TableReport[]> =>
  Promise.all((await listTables(store)).map((t) => tableReport(store, t)));

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => {
  for (const db of databases.splice(0)) db.drop();
});

describe('db copy between two embedded stores', () => {
  it('copies every table parents first and verifies counts and checksums', async () => {
    const source = await filled();
    const target = await embedded();
    const copied = await copyStore(source, target, SCHEMAS);
    expect(copied.map((t) => [t.table, t.rows])).toEqual([
      ['items', ITEMS],
      ['notes', 3],
      ['shelves', 3],
      ['tags', 3],
    ]);
    expect(await reports(target)).toEqual(await reports(source));
    // One value changed anywhere changes that table's checksum, not its count.
    await target.run('UPDATE items SET ratio = ratio + 1 WHERE id = 4000');
    const changed = await tableReport(target, 'items');
    expect(changed.rows).toBe(ITEMS);
    expect(changed.checksum).not.toBe((await tableReport(source, 'items')).checksum);
  });

  it("leaves out transient tables' rows (the masters' heartbeats) and the store's own tables", async () => {
    const heartbeats: StoreSchema = {
      owner: 'cluster-like',
      migrations: [{ id: 1, description: 'beats', sql: 'CREATE TABLE beats (id TEXT PRIMARY KEY)' }],
      transient: ['beats'],
    };
    const source = await filled();
    await source.migrate(heartbeats.owner, heartbeats.migrations);
    await source.run("INSERT INTO beats (id) VALUES ('master-1')");
    const target = await embedded();
    const copied = await copyStore(source, target, [...SCHEMAS, heartbeats]);
    expect(copied.map((t) => t.table)).toEqual(['items', 'notes', 'shelves', 'tags']);
    expect(await target.all('SELECT id FROM beats')).toEqual([]);
  });

  it('refuses a target holding rows unless told to overwrite, and then replaces them', async () => {
    const source = await filled();
    const target = await embedded();
    await target.migrate('shop', SCHEMAS[0]!.migrations);
    await target.run("INSERT INTO notes (body) VALUES ('keep me')");
    const refused = copyStore(source, target, SCHEMAS);
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toThrow(/table notes: 1 rows.*--overwrite/);
    expect(await target.all('SELECT body FROM notes')).toEqual([{ body: 'keep me' }]);
    await copyStore(source, target, SCHEMAS, { overwrite: true });
    expect(await reports(target)).toEqual(await reports(source));
  });

  it('refuses a source whose tables no plugin declares or whose migrations differ, copying nothing', async () => {
    const source = await filled();
    const target = await embedded();
    await expect(copyStore(source, target, [])).rejects.toThrow(/tables of "shop", which no plugin of this build/);
    const newer: StoreSchema[] = [
      { owner: 'shop', migrations: [...SCHEMAS[0]!.migrations, { id: 3, description: 'more', sql: 'SELECT 1' }] },
    ];
    const older = copyStore(source, target, newer);
    await expect(older).rejects.toBeInstanceOf(InvalidInputError);
    await expect(older).rejects.toThrow(/at migration 2, this build's at 3/);
    expect(await listTables(target)).toEqual([]);
  });
});

describe.skipIf(!postgresReachable())('db copy and backups across embedded and PostgreSQL', () => {
  it('round-trips embedded -> PostgreSQL -> embedded with equal checksums; new ids follow the copied ones', async () => {
    const source = await filled();
    const pg = await postgres();
    const there = await copyStore(source, pg, SCHEMAS);
    expect(there).toEqual(await reports(source));
    // The identity column continues after the largest copied id instead of colliding with id 1.
    await pg.run("INSERT INTO items (shelf, name) VALUES ('b', 'after the copy')");
    expect(await pg.get("SELECT id FROM items WHERE name = 'after the copy'")).toEqual({ id: ITEMS + 1 });
    await pg.run("DELETE FROM items WHERE name = 'after the copy'");
    const back = await embedded();
    expect(await copyStore(pg, back, SCHEMAS)).toEqual(there);
  });

  it('backs PostgreSQL up as an embedded image that restores on either backend', async () => {
    const pg = await postgres();
    await copyStore(await filled(), pg, SCHEMAS);
    // The master's PostgreSQL store knows its schema from the migrations applied through it.
    for (const schema of SCHEMAS) await pg.migrate(schema.owner, schema.migrations);
    const expected = await reports(pg);
    const file = join(mkdtempSync(join(tmpdir(), 'db-backup-')), 'backup.db.gz');
    writeFileSync(file, await pg.backupImage({ compress: true }));

    const dataDir = mkdtempSync(join(tmpdir(), 'db-restored-'));
    await restoreDatabase(dataDir, file, { decompress: true }, logger);
    const restored = await openStore(dataDir, logger);
    closers.push(() => restored.close({ snapshot: false }));
    expect(await reports(restored)).toEqual(expected);

    const other = await postgres();
    await other.migrate('shop', SCHEMAS[0]!.migrations);
    await other.run("INSERT INTO notes (body) VALUES ('replaced by the restore')");
    expect(await restoreInto(other, file, { decompress: true }, SCHEMAS, logger)).toEqual(expected);
  });
});
