import { resolve } from 'node:path';
import type { ClientConfig, Pool, PoolClient, QueryResult } from 'pg';
import {
  ConflictError,
  InvalidInputError,
  RunnerError,
  type Logger,
  type Migration,
  type RetentionPolicy,
  type SqlParams,
  type SqlValue,
  type Store,
  type StoreSchema,
  type StoreStats,
  type StoreTransaction,
  type WriteResult,
} from '@runner/plugin-sdk';
import { replaceFileAtomically } from './durable-fs.js';
import { checkMigrations, pendingMigrations } from './migrations.js';
import { RetentionRunner } from './retention.js';
import { PgChannel } from './pg-channel.js';
import { numberedPlaceholders, postgresSchema } from './sql-dialect.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/db?sslmode=require` (config `store.url`). */
  url: string;
  /** Connections at most (the pool is bounded: a burst waits for one instead of opening more). */
  poolSize?: number;
  /** A statement running longer is cancelled by the server (statement_timeout). */
  statementTimeoutMs?: number;
  /** How long to wait for a connection before the query fails with a 503. */
  connectTimeoutMs?: number;
  /** PEM of the CA that signed the server's certificate (verified; implies TLS). */
  ca?: string;
  /** Opened only to look (`runner doctor`): creates nothing, not even the migrations table. */
  readOnly?: boolean;
  /**
   * Told the reason when PostgreSQL stops answering and null once a query succeeds again (health
   * says degraded meanwhile: HttpRouter.reportCondition). Public, so it names no address.
   */
  onCondition?: (reason: string | null) => void;
}

const DEFAULTS = { poolSize: 10, statementTimeoutMs: 30_000, connectTimeoutMs: 10_000 };
/** PostgreSQL's int8 (COUNT, BIGINT columns) and numeric come back as numbers, as on sql.js. */
const NUMERIC_OIDS = new Set([20, 1700]);

/** The URL with its password replaced: what logs, errors and `config show` may print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // Not a URL we can parse: show no part that might be a secret.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** SQLSTATE classes of a lost or refused connection: the database is away, not the query wrong. */
function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return (
    /^(08|57P0[1-3]|53300)/.test(code) ||
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      (error as Error).message ?? '',
    )
  );
}

function bound(params: SqlParams | undefined, sql: string): unknown[] {
  if (params === undefined) return [];
  if (!Array.isArray(params)) {
    throw new InvalidInputError(`named parameters are not portable; use ? placeholders in "${sql.trim()}"`, {
      field: 'params',
    });
  }
  return (params as readonly SqlValue[]).map((value) => (typeof value === 'bigint' ? value.toString() : value));
}

/**
 * The store on PostgreSQL (node-postgres, a bounded pool). Each write is acknowledged after its
 * COMMIT. Plugins' portable SQL is rewritten by the dialect helper (`?` to `$n`; migration types).
 */
export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  private readonly retention: RetentionRunner;
  /** The migrations applied through this store, by owner: the schema of a logical backup. */
  private readonly schemas = new Map<string, StoreSchema>();
  private readonly channels = new Set<PgChannel>();

  private constructor(
    private readonly pool: Pool,
    /** How to open a connection of its own (the channel's LISTEN client), as the pool does. */
    private readonly connection: ClientConfig,
    /** The URL without its password. */
    readonly location: string,
    private readonly logger: Logger,
    private readonly onCondition?: (reason: string | null) => void,
  ) {
    this.retention = new RetentionRunner(logger);
  }

  static async open(options: PostgresStoreOptions, logger: Logger): Promise<PostgresStore> {
    const { default: pg } = await import('pg');
    const settings = { ...DEFAULTS, ...options };
    const connection: ClientConfig = {
      connectionString: options.url,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      statement_timeout: settings.statementTimeoutMs,
      ...(options.ca === undefined ? {} : { ssl: { ca: options.ca, rejectUnauthorized: true } }),
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          NUMERIC_OIDS.has(oid) ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    };
    const pool = new pg.Pool({ ...connection, max: settings.poolSize });
    const store = new PostgresStore(pool, connection, redactUrl(options.url), logger, options.onCondition);
    // An idle connection the server closed (a restart): the pool drops it and opens another on
    // the next query. Without a listener the error would end the process.
    pool.on('error', (error) => logger.warn(`PostgreSQL at ${store.location}: ${error.message}; reconnecting`));
    try {
      await store.query('SELECT 1');
      // Masters starting together: CREATE TABLE IF NOT EXISTS alone can still collide (pg_type).
      if (options.readOnly !== true)
        await store.withTransaction(async (tx) => {
          await tx.get("SELECT pg_advisory_xact_lock(hashtext('runner _migrations'))");
          await tx.run(
            'CREATE TABLE IF NOT EXISTS _migrations (owner TEXT NOT NULL, id BIGINT NOT NULL, description TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (owner, id))',
          );
        });
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    logger.info(`store on PostgreSQL at ${store.location}`);
    return store;
  }

  /** One statement on `client` (or any pooled connection), errors as the contract names them. */
  private async query(sql: string, params?: SqlParams, client?: PoolClient): Promise<QueryResult> {
    if (typeof sql !== 'string') throw new InvalidInputError('the SQL must be a string', { field: 'sql' });
    const text = numberedPlaceholders(sql).sql;
    const values = bound(params, sql);
    try {
      const result = await (client ?? this.pool).query(text, values);
      if (this.unavailable) this.setUnavailable(false);
      return result;
    } catch (error) {
      throw this.failure(error, sql);
    }
  }

  /** Whether the last query found PostgreSQL away; reported once per change, not per query. */
  private unavailable = false;

  private setUnavailable(away: boolean): void {
    this.unavailable = away;
    this.onCondition?.(away ? 'PostgreSQL does not answer: writes and reads of the store fail until it is back' : null);
    if (away) this.logger.error(`PostgreSQL at ${this.location} does not answer; retrying on every request`);
    else this.logger.info(`PostgreSQL at ${this.location} answers again`);
  }

  private failure(error: unknown, sql: string): RunnerError {
    if (error instanceof RunnerError) return error;
    const message = (error as Error).message ?? String(error);
    if (isUnavailable(error)) {
      if (!this.unavailable) this.setUnavailable(true);
      return new RunnerError(
        'store_unavailable',
        `PostgreSQL at ${this.location} is unavailable (${message}); the master retries on the next request`,
        { status: 503, cause: error },
      );
    }
    const shown = sql.length > 200 ? `${sql.slice(0, 200)}...` : sql;
    const text = `${message} (statement: ${shown.trim()})`;
    // Class 23: integrity constraint violation (unique, foreign key, not null, check).
    if ((error as { code?: string }).code?.startsWith('23')) return new ConflictError(text, { cause: error });
    return new RunnerError('sql_error', text, { cause: error, details: { sql } });
  }

  async all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async run(sql: string, params?: SqlParams): Promise<WriteResult> {
    return written(await this.query(sql, params));
  }

  async transaction(statements: readonly { sql: string; params?: SqlParams }[]): Promise<WriteResult[]> {
    if (!Array.isArray(statements)) {
      throw new InvalidInputError('transaction needs an array of statements', { field: 'statements' });
    }
    if (statements.length === 0) return [];
    return this.withTransaction(async (tx) => {
      const results: WriteResult[] = [];
      for (const s of statements) results.push(await tx.run(s.sql, s.params));
      return results;
    });
  }

  async withTransaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (typeof work !== 'function') throw new InvalidInputError('withTransaction needs a function', { field: 'work' });
    const client = await this.connect();
    let failed: unknown;
    const step = async <R>(sql: string, params: SqlParams | undefined, answer: (r: QueryResult) => R) => {
      if (failed !== undefined) throw failed;
      try {
        return answer(await this.query(sql, params, client));
      } catch (error) {
        failed = error;
        throw error;
      }
    };
    const tx: StoreTransaction = {
      all: (sql, params) => step(sql, params, (r) => r.rows),
      get: (sql, params) => step(sql, params, (r) => r.rows[0]),
      run: (sql, params) => step(sql, params, written),
    };
    let released = false;
    try {
      await this.query('BEGIN', undefined, client);
      const value = await work(tx);
      if (failed !== undefined) throw failed;
      await this.query('COMMIT', undefined, client);
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        // The connection is broken: it must not go back to the pool.
        client.release(rollbackError);
        released = true;
      });
      throw error;
    } finally {
      if (!released) client.release();
    }
  }

  private async connect(): Promise<PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw this.failure(error, 'connect');
    }
  }

  /**
   * Applies pending migrations, each in its own transaction, under an advisory lock per owner so
   * that masters starting together apply each once.
   */
  async migrate(owner: string, migrations: readonly Migration[]): Promise<void> {
    checkMigrations(owner, migrations);
    this.schemas.set(owner, { owner, migrations });
    for (;;) {
      const next = await this.withTransaction(async (tx) => {
        await tx.get('SELECT pg_advisory_xact_lock(hashtext(?))', [`runner migrations ${owner}`]);
        const applied = (await tx.all<{ id: number }>('SELECT id FROM _migrations WHERE owner = ?', [owner])).map(
          (r) => r.id,
        );
        const [m] = pendingMigrations(owner, migrations, applied);
        if (m === undefined) return undefined;
        try {
          await tx.run(postgresSchema(m.sql));
        } catch (error) {
          throw new RunnerError(
            'migration_failed',
            `migration ${m.id} (${m.description}) of ${owner} failed: ${(error as Error).message}`,
            { cause: error, details: { owner, id: m.id } },
          );
        }
        await tx.run('INSERT INTO _migrations (owner, id, description, applied_at) VALUES (?, ?, ?, ?)', [
          owner,
          m.id,
          m.description,
          new Date().toISOString(),
        ]);
        return m;
      });
      if (next === undefined) return;
    }
  }

  /**
   * A logical backup: the rows copied into an embedded database whose image is the backup, the
   * same format the embedded store writes, so either backend restores it. The schema comes from
   * the migrations the plugins applied through this store.
   */
  async backupImage(options: { compress?: boolean } = {}): Promise<Uint8Array> {
    const { embeddedImage } = await import('./logical-backup.js');
    return embeddedImage(this, [...this.schemas.values()], this.logger, options);
  }

  async backup(outputPath: string, options: { compress?: boolean } = {}): Promise<{ path: string; bytes: number }> {
    const output = resolve(outputPath);
    const data = await this.backupImage(options);
    await replaceFileAtomically(output, data);
    this.logger.info(`backup written to ${output} (${data.length} bytes${options.compress ? ', gzip' : ''})`);
    return { path: output, bytes: data.length };
  }

  async vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    const size = async () =>
      (await this.get<{ n: number }>('SELECT pg_database_size(current_database()) AS n'))?.n ?? 0;
    const bytesBefore = await size();
    await this.query('VACUUM (ANALYZE)');
    return { bytesBefore, bytesAfter: await size() };
  }

  async stats(): Promise<StoreStats> {
    const names = await this.all<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    const tables = [];
    for (const { name } of names) {
      const row = await this.get<{ n: number }>(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`);
      tables.push({ name, rows: row?.n ?? 0 });
    }
    const bytes = (await this.get<{ n: number }>('SELECT pg_database_size(current_database()) AS n'))?.n ?? 0;
    return {
      path: this.location,
      snapshotBytes: 0,
      journalBytes: 0,
      journalRecords: 0,
      tables,
      pageCount: Math.ceil(bytes / 8192),
      pageSize: 8192,
      lastSnapshotAt: null,
      retention: await this.retention.stats(),
    };
  }

  retain(policy: RetentionPolicy): () => void {
    return this.retention.register(policy);
  }

  startRetention(intervalMs: number): void {
    this.retention.start(intervalMs);
  }

  pruneNow(): Promise<void> {
    return this.retention.runPass();
  }

  /**
   * A channel between the processes sharing this database (LISTEN/NOTIFY on a connection of its
   * own); see pg-channel.ts. Closed with the store.
   */
  async openChannel(name: string, onMessage: (payload: string) => void): Promise<PgChannel> {
    const channel = await PgChannel.open({
      name,
      connection: this.connection,
      store: this,
      logger: this.logger,
      location: this.location,
      onMessage,
    });
    this.channels.add(channel);
    return channel;
  }

  /** Ends the retention schedule and closes every connection. */
  async close(): Promise<void> {
    for (const channel of this.channels) await channel.close();
    await this.retention.stop();
    await this.pool.end();
    this.logger.info(`store on PostgreSQL at ${this.location} closed`);
  }
}

function written(result: QueryResult): WriteResult {
  // PostgreSQL has no rowid: a portable insert that needs its id reads it back by a unique key.
  return { changes: result.rowCount ?? 0, lastInsertRowid: 0 };
}
