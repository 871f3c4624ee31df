import { createServiceRef } from './service-ref.js';

export type SqlValue = string | number | bigint | null | Uint8Array;

/**
 * The SQL the backend speaks. Plugins write one portable text for both (plugins/store/README.md,
 * "SQL written once"): `?` placeholders, `INSERT ... ON CONFLICT`, reserved words quoted
 * (`"user"`), schema types TEXT, INTEGER, REAL and BLOB. Branch on it only where no portable
 * form exists (the catalogue of tables, query plans).
 */
export type SqlDialect = 'sqlite' | 'postgres';
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** One schema change of a plugin's tables. Ids increase; an applied id never runs again. */
export interface Migration {
  id: number;
  description: string;
  sql: string;
}

/** One owner's migrations: what creates (and has changed) that owner's tables. */
export interface StoreSchema {
  owner: string;
  migrations: readonly Migration[];
  /**
   * Tables whose rows describe live processes, not data (the masters' heartbeats): created by
   * the migrations like any other, but left empty by `runner db copy` and backups.
   */
  transient?: readonly string[];
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
  /** What each retention policy keeps; empty when none is registered (no master holds the store). */
  retention: RetentionStats[];
}

/**
 * One kind of data a plugin keeps bounded by age and count (executions, task logs, events). The
 * store prunes every registered policy in the background, a batch at a time, so writes go on
 * between batches, and `runner db stats` shows what each keeps.
 */
export interface RetentionPolicy {
  /** What is kept: `executions`, `task logs`, `events`. */
  name: string;
  /** The rule in words, naming its config keys: `30d and 10000 runs (engine.retention.max_age, ...)`. */
  rule: string;
  /** How many are kept now, and the oldest kept (ISO 8601). */
  kept(): Promise<{ count: number; oldest?: string }>;
  /**
   * Removes one bounded batch (a few milliseconds of work) of what the rule no longer keeps at
   * `now`; resolves with how many it removed once that is durable. 0 means nothing is left to do.
   */
  pruneBatch(now: Date): Promise<number>;
  /**
   * How many the rule no longer keeps at `now`: what the next pass would remove (the batches
   * `pruneBatch` takes until it returns 0), counted with the same bound, without removing any.
   */
  due?(now: Date): Promise<number>;
}

export interface RetentionStats {
  name: string;
  rule: string;
  kept: number;
  oldest?: string;
  /** Of those kept now, how many the rule no longer keeps: the next pass removes them. */
  due?: number;
  /** When the last pass over this policy ended; null before the first. */
  lastPrunedAt: string | null;
  /** Removed by that pass. */
  lastRemoved: number;
  /** The last pass's failure, if it failed. */
  lastError?: string;
}

/** The reads of the store, and of an interactive transaction (which sees its own writes). */
export interface StoreReader {
  all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined>;
}

/** What the callback of `Store.withTransaction` reads and writes through. */
export interface StoreTransaction extends StoreReader {
  run(sql: string, params?: SqlParams): Promise<WriteResult>;
}

/**
 * The durable store. Reads resolve with rows; a write resolves only once it is durable (embedded:
 * journalled and fsynced, concurrent writes sharing one fsync; PostgreSQL: committed). A write
 * that fails leaves nothing behind; one that breaks a constraint (a duplicate key...) rejects with
 * a ConflictError. Statements must be deterministic (no `random()`, no `'now'`): the embedded
 * store's journal replays them on start-up, so pass times and ids as parameters.
 */
export interface Store extends StoreReader {
  readonly dialect: SqlDialect;
  run(sql: string, params?: SqlParams): Promise<WriteResult>;
  /** Several statements, all or none. */
  transaction(statements: readonly { sql: string; params?: SqlParams }[]): Promise<WriteResult[]>;
  /**
   * An interactive transaction: `work` reads, decides and writes through `tx`, all or nothing
   * (claims and leases). It commits when `work` resolves and rolls back when it rejects (or when
   * a statement in it failed), rejecting with that error. Keep it short and use only `tx` inside:
   * on the embedded store it holds every other read and write of the store until it ends (so
   * nothing sees its writes before they commit), and using the store itself in it is refused.
   */
  withTransaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /** Applies a plugin's pending migrations in order, each atomically. */
  migrate(owner: string, migrations: readonly Migration[]): Promise<void>;
  /** A consistent copy of the database, every write in it durable (gzip when `compress`). */
  backupImage(options?: { compress?: boolean }): Promise<Uint8Array>;
  /** Writes `backupImage` to a file on this host, via a temp file, fsync and rename. */
  backup(outputPath: string, options?: { compress?: boolean }): Promise<{ path: string; bytes: number }>;
  /** Rebuilds the database compactly and takes a snapshot. */
  vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }>;
  stats(): Promise<StoreStats>;
  /** Adds a retention policy, pruned from now on; returns a function that removes it. */
  retain(policy: RetentionPolicy): () => void;
}

/** True when `store` has a table of that name (a plugin's tables exist once it has run here). */
export async function hasTable(store: Pick<Store, 'get' | 'dialect'>, name: string): Promise<boolean> {
  const found = await store.get(
    store.dialect === 'postgres'
      ? 'SELECT 1 AS found FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?'
      : "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?",
    [name],
  );
  return found !== undefined;
}

export const StoreRef = createServiceRef<Store>({ id: 'store', description: 'the durable store' });
