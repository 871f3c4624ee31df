import { positiveNumber, type ConfigDeclaration, type RunnerConfig } from '@runner/plugin-sdk';

export const SNAPSHOT_JOURNAL_BYTES_KEY = 'store.snapshot_journal_bytes';
// Replay costs 20-45 µs a record: 16 MiB of journal keeps a restart within a few seconds.
export const DEFAULT_SNAPSHOT_JOURNAL_BYTES = 16 * 1024 * 1024;
// A store closed by an embedded kernel snapshots only past this much journal: at ~2 KB a one-task
// run, one exit in about thirty folds it, and start-up never replays more than ~5 ms of it.
export const EMBEDDED_CLOSE_SNAPSHOT_BYTES = 64 * 1024;
export const RETENTION_INTERVAL_KEY = 'store.retention_interval';
export const DEFAULT_RETENTION_INTERVAL_S = 600;
export const TRANSACTION_TIMEOUT_KEY = 'store.transaction_timeout';
export const URL_KEY = 'store.url';
export const POOL_SIZE_KEY = 'store.pool_size';
export const STATEMENT_TIMEOUT_KEY = 'store.statement_timeout';
export const LEASE_TIMEOUT_KEY = 'cluster.lease_timeout';
export const HEARTBEAT_INTERVAL_KEY = 'cluster.heartbeat_interval';
/** Seconds an interactive transaction may hold the store (sql-transaction.ts has the same in ms). */
export const DEFAULT_TRANSACTION_TIMEOUT_S = 10;

/** Keys of the store, checked by the kernel before setup. */
export const STORE_CONFIG: ConfigDeclaration = {
  [SNAPSHOT_JOURNAL_BYTES_KEY]: {
    schema: { type: 'integer', minimum: 1 },
    default: DEFAULT_SNAPSHOT_JOURNAL_BYTES,
    help: 'journal size (bytes) that triggers a snapshot of the database',
  },
  [RETENTION_INTERVAL_KEY]: positiveNumber(
    DEFAULT_RETENTION_INTERVAL_S,
    'seconds between retention passes (what each plugin keeps: runner db stats), the first a second after start',
  ),
  [URL_KEY]: {
    schema: { type: 'string' },
    default: '',
    secret: true,
    help: 'postgres://user:password@host:5432/db?sslmode=require to keep the store on PostgreSQL (RUNNER_STORE_URL); empty: the embedded store in the data directory',
  },
  [POOL_SIZE_KEY]: {
    schema: { type: 'integer', minimum: 1 },
    default: 10,
    help: 'connections to PostgreSQL at most (store.url)',
  },
  [STATEMENT_TIMEOUT_KEY]: positiveNumber(30, 'seconds a statement may run on PostgreSQL before the server cancels it'),
  [LEASE_TIMEOUT_KEY]: positiveNumber(
    15,
    'seconds without a heartbeat after which a master sharing the PostgreSQL store is dead: a survivor ends its running runs interrupted',
  ),
  [HEARTBEAT_INTERVAL_KEY]: positiveNumber(
    3,
    "seconds between a master's heartbeats (and its looks for dead masters) on a shared PostgreSQL store; keep it well under cluster.lease_timeout",
  ),
  [TRANSACTION_TIMEOUT_KEY]: positiveNumber(
    DEFAULT_TRANSACTION_TIMEOUT_S,
    'seconds an interactive transaction (withTransaction) may run before it is rolled back',
  ),
};

/** The PostgreSQL settings when `store.url` is set; undefined for the embedded store. */
export function postgresSettings(
  config: RunnerConfig,
): { url: string; poolSize: number; statementTimeoutMs: number } | undefined {
  const url = config.get<string>(URL_KEY);
  if (!url) return undefined;
  return {
    url,
    poolSize: config.get<number>(POOL_SIZE_KEY),
    statementTimeoutMs: Math.round(config.get<number>(STATEMENT_TIMEOUT_KEY) * 1000),
  };
}

/** `store.transaction_timeout` in milliseconds. */
export function transactionTimeoutMs(config: RunnerConfig): number {
  return Math.round(config.get<number>(TRANSACTION_TIMEOUT_KEY) * 1000);
}

/** `store.retention_interval` in milliseconds. */
export function retentionIntervalMs(config: RunnerConfig): number {
  return Math.round(config.get<number>(RETENTION_INTERVAL_KEY) * 1000);
}

/** `store.snapshot_journal_bytes`: journal size that triggers a snapshot. */
export function snapshotJournalBytes(config: RunnerConfig): number {
  return config.get<number>(SNAPSHOT_JOURNAL_BYTES_KEY);
}

/** `cluster.*` in milliseconds; the heartbeat is kept at most a third of the lease timeout. */
export function clusterTimings(config: RunnerConfig): { leaseTimeoutMs: number; heartbeatMs: number } {
  const leaseTimeoutMs = Math.round(config.get<number>(LEASE_TIMEOUT_KEY) * 1000);
  const heartbeatMs = Math.min(
    Math.round(config.get<number>(HEARTBEAT_INTERVAL_KEY) * 1000),
    Math.floor(leaseTimeoutMs / 3),
  );
  return { leaseTimeoutMs, heartbeatMs: Math.max(heartbeatMs, 100) };
}
