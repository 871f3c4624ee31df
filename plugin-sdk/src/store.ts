import { createServiceRef } from './service-ref.js';

export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** One schema change of a plugin's tables. Ids increase; an applied id never runs again. */
export interface Migration {
  id: number;
  description: string;
  sql: string;
}

export interface WriteResult {
  /** Rows changed by the statement. */
  changes: number;
  lastInsertRowid: number;
}

export interface StoreStats {
  path: string;
  /** Bytes of the last snapshot file. */
  snapshotBytes: number;
  /** Bytes of the journal since that snapshot. */
  journalBytes: number;
  journalRecords: number;
  tables: { name: string; rows: number }[];
  pageCount: number;
  pageSize: number;
  lastSnapshotAt: string | null;
}

/**
 * The durable store. Reads are synchronous against memory. A write resolves only once it is
 * durable (journalled and fsynced); concurrent writes share one fsync. A write that fails leaves
 * nothing behind. Statements must be deterministic (no `random()`, no `'now'`): the journal
 * replays them on start-up, so pass times and ids as parameters.
 */
export interface Store {
  all<T = Record<string, unknown>>(sql: string, params?: SqlParams): T[];
  get<T = Record<string, unknown>>(sql: string, params?: SqlParams): T | undefined;
  run(sql: string, params?: SqlParams): Promise<WriteResult>;
  /** Several statements, all or none. */
  transaction(statements: readonly { sql: string; params?: SqlParams }[]): Promise<WriteResult[]>;
  /** Applies a plugin's pending migrations in order, each atomically. */
  migrate(owner: string, migrations: readonly Migration[]): Promise<void>;
  /** A consistent copy of the database, every write in it durable (gzip when `compress`). */
  backupImage(options?: { compress?: boolean }): Promise<Uint8Array>;
  /** Writes `backupImage` to a file on this host, via a temp file, fsync and rename. */
  backup(outputPath: string, options?: { compress?: boolean }): Promise<{ path: string; bytes: number }>;
  /** Rebuilds the database compactly and takes a snapshot. */
  vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }>;
  stats(): StoreStats;
}

export const StoreRef = createServiceRef<Store>({ id: 'store', description: 'the durable sql.js store' });
