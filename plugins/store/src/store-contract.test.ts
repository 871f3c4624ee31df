// The Store contract (plugin-sdk/src/store.ts), the same cases on every backend: what a plugin may
// rely on whichever store a master runs on.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConflictError, inUnitOfWork, withUnitOfWork, type Migration, type UnitOfWork } from '@runner/plugin-sdk';
import { storeBackends, type OpenBackend } from '../testing.js';

const ITEMS: Migration[] = [
  {
    id: 1,
    description: 'items',
    sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, size INTEGER, ratio REAL, data BLOB)',
  },
  { id: 2, description: 'items by size', sql: 'CREATE INDEX items_by_size ON items (size, id)' },
];

const names = async (open: OpenBackend) =>
  (await open.store.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name);

for (const backend of storeBackends('store_contract')) {
  describe.skipIf(!backend.available)(`the store contract on ${backend.name}`, () => {
    const opened: OpenBackend[] = [];
    const open = async () => {
      const next = await backend.open();
      opened.push(next);
      await next.store.migrate('contract', ITEMS);
      return next;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((o) => o.close()));
    });
    afterAll(() => backend.cleanup());

    it('writes, then reads rows back with numbers, text, null and bytes as written', async () => {
      const s = await open();
      const written = await s.store.run('INSERT INTO items (name, size, ratio, data) VALUES (?, ?, ?, ?)', [
        'a',
        2 ** 40,
        0.5,
        new Uint8Array([0, 255, 7]),
      ]);
      expect(written.changes).toBe(1);
      await s.store.run('INSERT INTO items (name) VALUES (?)', ['b']);
      const row = await s.store.get<{ size: number; ratio: number; data: Uint8Array }>(
        'SELECT size, ratio, data FROM items WHERE name = ?',
        ['a'],
      );
      expect(row?.size).toBe(2 ** 40);
      expect(row?.ratio).toBe(0.5);
      expect([...(row?.data ?? [])]).toEqual([0, 255, 7]);
      expect(await s.store.get('SELECT size FROM items WHERE name = ?', ['b'])).toEqual({ size: null });
      expect(await s.store.get('SELECT COUNT(*) AS n FROM items')).toEqual({ n: 2 });
      expect(await s.store.get('SELECT name FROM items WHERE name = ?', ['none'])).toBeUndefined();
      expect((await s.store.run('UPDATE items SET size = ? WHERE size IS NULL', [1])).changes).toBe(1);
    });

    it('maps a violated constraint to ConflictError, and keeps nothing of a failed transaction', async () => {
      const s = await open();
      await s.store.run("INSERT INTO items (name) VALUES ('a')");
      await expect(s.store.run("INSERT INTO items (name) VALUES ('a')")).rejects.toBeInstanceOf(ConflictError);
      await expect(
        s.store.transaction([
          { sql: "INSERT INTO items (name) VALUES ('b')" },
          { sql: "INSERT INTO items (name) VALUES ('a')" },
        ]),
      ).rejects.toBeInstanceOf(ConflictError);
      await expect(s.store.run('INSERT INTO nowhere VALUES (1)')).rejects.toMatchObject({ code: 'sql_error' });
      expect(await names(s)).toEqual(['a']);
    });

    it('runs an interactive transaction all or nothing, and rolls back one whose statement failed', async () => {
      const s = await open();
      const value = await s.store.withTransaction(async (tx) => {
        await tx.run("INSERT INTO items (name) VALUES ('in')");
        return (await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM items'))?.n;
      });
      expect(value).toBe(1);
      await expect(
        s.store.withTransaction(async (tx) => {
          await tx.run("INSERT INTO items (name) VALUES ('gone')");
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      await expect(
        s.store.withTransaction(async (tx) => {
          await tx.run("INSERT INTO items (name) VALUES ('also gone')");
          await tx.run("INSERT INTO items (name) VALUES ('in')").catch(() => undefined);
        }),
      ).rejects.toBeInstanceOf(ConflictError);
      expect(await names(s)).toEqual(['in']);
    });

    it('commits a unit of work whole, its effects after the commit and none after a rollback', async () => {
      const s = await open();
      const told: string[] = [];
      const onEffectError = (error: Error) => told.push(`failed: ${error.message}`);
      // A participant: joins the caller's unit (or opens one), tells of its write once it committed.
      const insert = (name: string, unit?: UnitOfWork) =>
        inUnitOfWork(
          s.store,
          unit,
          async (joined) => {
            await joined.tx.run('INSERT INTO items (name) VALUES (?)', [name]);
            joined.afterCommit(() => told.push(name));
          },
          onEffectError,
        );
      await insert('alone');
      const refused = withUnitOfWork(
        s.store,
        async (unit) => {
          await insert('first', unit);
          await insert('alone', unit);
        },
        onEffectError,
      );
      await expect(refused).rejects.toBeInstanceOf(ConflictError);
      expect(told).toEqual(['alone']);
      await withUnitOfWork(
        s.store,
        async (unit) => {
          await insert('first', unit);
          unit.afterCommit(() => {
            throw new Error('a cache could not be read');
          });
          await insert('second', unit);
        },
        onEffectError,
      );
      expect(told).toEqual(['alone', 'first', 'failed: a cache could not be read', 'second']);
      expect(await names(s)).toEqual(['alone', 'first', 'second']);
    });

    it('claims a unique row once among concurrent claimers (the claim primitive)', async () => {
      const s = await open();
      const claim = (who: string) =>
        s.store
          .run('INSERT INTO items (name, size) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', ['slot-1', who.length])
          .then((r) => r.changes === 1);
      const won = await Promise.all(['a', 'bb', 'ccc', 'dddd', 'eeeee'].map(claim));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await s.store.get('SELECT COUNT(*) AS n FROM items')).toEqual({ n: 1 });
    });

    it('applies each migration once, in order, however often and concurrently asked', async () => {
      const s = await open();
      await Promise.all([s.store.migrate('contract', ITEMS), s.store.migrate('contract', ITEMS)]);
      const more = [...ITEMS, { id: 3, description: 'a note', sql: 'ALTER TABLE items ADD COLUMN note TEXT' }];
      await s.store.migrate('contract', more);
      await s.store.run("INSERT INTO items (name, note) VALUES ('n', 'x')");
      expect(
        await s.store.all('SELECT id, description FROM _migrations WHERE owner = ? ORDER BY id', ['contract']),
      ).toEqual([
        { id: 1, description: 'items' },
        { id: 2, description: 'items by size' },
        { id: 3, description: 'a note' },
      ]);
      await expect(
        s.store.migrate('contract', [
          ...more,
          { id: 4, description: 'broken', sql: 'ALTER TABLE nowhere ADD COLUMN x TEXT' },
        ]),
      ).rejects.toMatchObject({ code: 'migration_failed' });
      expect((await s.store.all('SELECT id FROM _migrations WHERE owner = ?', ['contract'])).length).toBe(3);
    });

    it('prunes a retention policy batch by batch and reports it', async () => {
      const s = await open();
      await s.store.transaction(
        Array.from({ length: 25 }, (_, i) => ({
          sql: 'INSERT INTO items (name, size) VALUES (?, ?)',
          params: [`n${i}`, i],
        })),
      );
      s.store.retain({
        name: 'items',
        rule: 'the 10 largest',
        kept: async () => ({ count: (await s.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM items'))?.n ?? 0 }),
        async pruneBatch() {
          const ids = (
            await s.store.all<{ id: number }>('SELECT id FROM items ORDER BY size DESC LIMIT 5 OFFSET 10')
          ).map((r) => r.id);
          if (ids.length === 0) return 0;
          await s.store.run(`DELETE FROM items WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
          return ids.length;
        },
      });
      await s.store.pruneNow();
      expect((await s.store.stats()).retention).toEqual([
        expect.objectContaining({ name: 'items', kept: 10, lastRemoved: 15 }),
      ]);
      expect(await s.store.get('SELECT MIN(size) AS n FROM items')).toEqual({ n: 15 });
    });

    it('lists its tables with their rows in stats', async () => {
      const s = await open();
      await s.store.run("INSERT INTO items (name) VALUES ('a')");
      const { tables } = await s.store.stats();
      expect(tables).toEqual(expect.arrayContaining([{ name: 'items', rows: 1 }]));
    });
  });
}
