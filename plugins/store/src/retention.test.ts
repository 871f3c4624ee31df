import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RetentionPolicy } from '@runner/plugin-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatStats } from './db-commands.js';
import { openStore, type OpenedStore } from './sql-store.js';

const warnings: string[] = [];
const logger = {
  debug() {},
  info() {},
  warn(message: string) {
    warnings.push(message);
  },
  error() {},
  child() {
    return logger;
  },
} as never;

/** Keeps the newest `keep` rows of a real table, removing at most `batch` per call. */
function rowsPolicy(store: OpenedStore, keep: number, batch: number): RetentionPolicy & { batches: number } {
  const policy = {
    name: 'items',
    rule: `the newest ${keep} (test.keep)`,
    batches: 0,
    kept: async () => ({ count: (await store.get<{ n: number }>('SELECT COUNT(*) AS n FROM items'))?.n ?? 0 }),
    async pruneBatch() {
      const ids = (
        await store.all<{ id: number }>('SELECT id FROM items ORDER BY id DESC LIMIT ? OFFSET ?', [batch, keep])
      ).map((r) => r.id);
      if (ids.length === 0) return 0;
      policy.batches++;
      await store.run(`DELETE FROM items WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
      return ids.length;
    },
  };
  return policy;
}

describe('retention passes', () => {
  let dir: string;
  let store: OpenedStore;

  beforeEach(async () => {
    warnings.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'runner-store-retention-'));
    store = await openStore(dir, logger);
    await store.migrate('test', [{ id: 1, description: 'items', sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY)' }]);
    await store.transaction(
      Array.from({ length: 50 }, (_, i) => ({ sql: 'INSERT INTO items VALUES (?)', params: [i] })),
    );
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prunes batch by batch, records the pass, and db stats shows it', async () => {
    const policy = rowsPolicy(store, 10, 15);
    store.retain(policy);
    expect((await store.stats()).retention).toEqual([
      { name: 'items', rule: 'the newest 10 (test.keep)', kept: 50, lastPrunedAt: null, lastRemoved: 0 },
    ]);
    await store.pruneNow();
    expect(policy.batches).toBe(3);
    const [stats] = (await store.stats()).retention;
    expect(stats).toMatchObject({ kept: 10, lastRemoved: 40, lastPrunedAt: expect.any(String) });
    expect(formatStats(await store.stats())).toContain(
      `retention\n  items: keeps the newest 10 (test.keep)\n    kept now 10; last pass ${stats.lastPrunedAt}, removed 40\n`,
    );
  });

  it('records a failing policy and goes on with the others', async () => {
    store.retain({
      name: 'broken',
      rule: 'none',
      kept: async () => ({ count: 0 }),
      pruneBatch: () => store.run('DELETE FROM nowhere').then(() => 1),
    });
    store.retain(rowsPolicy(store, 45, 100));
    await store.pruneNow();
    const [broken, items] = (await store.stats()).retention;
    expect(broken.lastError).toMatch(/no such table: nowhere/);
    expect(warnings.join('\n')).toMatch(/retention of broken failed: .*nowhere/);
    expect(items).toMatchObject({ kept: 45, lastRemoved: 5 });
  });

  it('stops a pass at the end of its current batch when the store closes', async () => {
    const policy = rowsPolicy(store, 0, 1);
    store.retain(policy);
    const pass = store.pruneNow();
    await store.close();
    await pass;
    expect(policy.batches).toBeLessThan(50);
    store = await openStore(dir, logger);
    expect(await store.get('SELECT COUNT(*) AS n FROM items')).toEqual({ n: 50 - policy.batches });
  });

  it('says when no policy is registered, with the configured retention settings', async () => {
    const text = formatStats(await store.stats(), [
      { key: 'engine.retention.max_age', value: '30d' },
      { key: 'store.retention_interval', value: 600 },
    ]);
    expect(text.split('\n').slice(-4)).toEqual([
      'retention  applies while a master (or a run) has this data directory open; configured:',
      '  engine.retention.max_age = 30d',
      '  store.retention_interval = 600',
      '',
    ]);
  });
});
