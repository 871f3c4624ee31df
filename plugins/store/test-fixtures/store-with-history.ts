import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeLayout, type StoreLayout } from '../src/layout.js';
import { openStore } from '../src/sql-store.js';
import { recordingLogger } from './recording-logger.js';

export const ITEMS = [
  { id: 1, description: 'items', sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)' },
];

/**
 * A closed store whose snapshot holds records 1..101 (the migration, 100 rows) and whose journal 2
 * holds records 102..201 (100 more): for the mark's and the repair's tests.
 */
export async function storeWithHistory(prefix: string): Promise<{ dataDir: string; layout: StoreLayout }> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const store = await openStore(dataDir, recordingLogger());
  await store.migrate('test', ITEMS);
  for (let i = 0; i < 100; i++) await store.run('INSERT INTO items (name) VALUES (?)', [`before ${i}`]);
  await store.snapshot();
  for (let i = 0; i < 100; i++) await store.run('INSERT INTO items (name) VALUES (?)', [`after ${i}`]);
  await store.close({ snapshot: false });
  return { dataDir, layout: storeLayout(dataDir) };
}
