// The store backends a contract test runs on: the embedded store in a temp data directory, and
// PostgreSQL in a database of this test file's own (dropped after), skipped with one line saying
// how to start it when PostgreSQL is not reachable (a failure under CI=true).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@runner/plugin-sdk';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../test/support/postgres.js';
import { PostgresStore } from './src/pg-store.js';
import { openStore } from './src/sql-store.js';
import { recordingLogger } from './test-fixtures/recording-logger.js';

/** A store a test opened, with what it must do when done with it. */
export interface OpenBackend {
  store: Store & { pruneNow(): Promise<void> };
  close(): Promise<void>;
  /** The same database opened again, as a restarted master would (call `close` first). */
  reopen(): Promise<OpenBackend>;
  /** The embedded store's data directory (undefined on PostgreSQL). */
  dataDir?: string;
}

export interface StoreBackend {
  name: 'embedded' | 'postgres';
  /** False when the test must skip (PostgreSQL not reachable). */
  available: boolean;
  /** A new, empty store. */
  open(): Promise<OpenBackend>;
  /** Drops what `open` created (PostgreSQL: the test file's databases). */
  cleanup(): void;
}

async function openEmbedded(dataDir: string): Promise<OpenBackend> {
  // No snapshot at close: a reopen replays the journal, as after a crash.
  const store = await openStore(dataDir, recordingLogger());
  return { store, dataDir, close: () => store.close({ snapshot: false }), reopen: () => openEmbedded(dataDir) };
}

function embedded(): StoreBackend {
  return {
    name: 'embedded',
    available: true,
    open: () => openEmbedded(mkdtempSync(join(tmpdir(), 'store-contract-'))),
    cleanup: () => undefined,
  };
}

async function openPostgres(db: TestDatabase): Promise<OpenBackend> {
  const store = await PostgresStore.open({ url: db.url, poolSize: 4 }, recordingLogger());
  return { store, close: () => store.close(), reopen: () => openPostgres(db) };
}

function postgres(prefix: string): StoreBackend {
  const databases: TestDatabase[] = [];
  return {
    name: 'postgres',
    available: postgresReachable(),
    async open() {
      const db = createTestDatabase(prefix);
      databases.push(db);
      return openPostgres(db);
    },
    cleanup: () => {
      for (const db of databases.splice(0)) db.drop();
    },
  };
}

/** Both backends; `prefix` names this file's PostgreSQL databases. */
export function storeBackends(prefix: string): StoreBackend[] {
  return [embedded(), postgres(prefix)];
}
