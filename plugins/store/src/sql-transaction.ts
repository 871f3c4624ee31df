import { InvalidInputError, RunnerError, type SqlParams, type StoreTransaction } from '@runner/plugin-sdk';
import { encodeEntry, type JournalStatement } from './journal.js';
import { DEFAULT_TRANSACTION_TIMEOUT_S } from './config.js';
import type { SqlDatabase } from './sql-database.js';

/** How long an interactive transaction may hold the embedded store (config `store.transaction_timeout`). */
export const DEFAULT_TRANSACTION_TIMEOUT_MS = DEFAULT_TRANSACTION_TIMEOUT_S * 1000;

type Read = <T>(sql: string, params?: SqlParams) => T[];

/**
 * One interactive transaction on the in-memory database (Store.withTransaction): BEGIN when
 * opened, its reads and writes on the one connection, and at the end either COMMIT with the
 * journal payload of its writes (reads are not journalled: replaying the writes in order gives
 * the same database) or ROLLBACK. A failed statement fails the whole transaction, as on
 * PostgreSQL, so code written for one backend behaves the same on the other.
 */
export class OpenTransaction {
  readonly handle: StoreTransaction;
  /** Resolves when the transaction ended, committed or not: the store's waiting work goes on. */
  readonly ended: Promise<void>;
  /** Why the transaction can no longer commit: a statement that failed, or the timeout. */
  private failure: Error | undefined;
  private readonly writes: JournalStatement[] = [];
  private state: 'open' | 'committed' | 'rolled back' = 'open';
  private readonly timer: NodeJS.Timeout;
  private markEnded!: () => void;

  constructor(
    private readonly sql: SqlDatabase,
    read: Read,
    timeoutMs: number,
    /** Called when the timeout rolled the transaction back: the store stops waiting for it. */
    onTimeout: () => void,
  ) {
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
    this.sql.withWrites(() => this.sql.db.exec('BEGIN'));
    // Work that never settles (one that waits for the store itself inside its transaction, say)
    // would otherwise hold every read and write of the store for good.
    this.timer = setTimeout(() => {
      if (this.state !== 'open') return;
      this.failure = new RunnerError(
        'transaction_timeout',
        `an interactive transaction held the store for more than ${timeoutMs} ms and was rolled back ` +
          '(inside withTransaction, read and write through its tx, never through the store itself)',
        { status: 503 },
      );
      this.rollback();
      onTimeout();
    }, timeoutMs);
    this.timer.unref();
    this.handle = {
      all: async <T>(text: string, params?: SqlParams) => this.attempt(() => read<T>(text, params)),
      get: async <T>(text: string, params?: SqlParams) => this.attempt(() => read<T>(text, params)[0]),
      run: async (text: string, params?: SqlParams) => {
        if (typeof text !== 'string') throw new InvalidInputError('run needs an SQL string', { field: 'sql' });
        return this.attempt(() => {
          const result = this.sql.withWrites(() => this.sql.execute({ sql: text, params }));
          this.writes.push({ sql: text, params });
          return result;
        });
      },
    };
  }

  /**
   * Commits in memory and returns the journal payload of the writes (undefined when there were
   * none); throws, having rolled back, when a statement failed or a parameter cannot be journalled.
   */
  commit(): string | undefined {
    if (this.failure !== undefined) throw this.failure;
    if (this.state !== 'open') throw new RunnerError('transaction_ended', `the transaction was ${this.state}`);
    // Encoded before COMMIT: a parameter the journal cannot carry must not stay in memory.
    const payload = this.writes.length === 0 ? undefined : encodeEntry({ mode: 'tx', statements: this.writes });
    this.sql.withWrites(() => this.sql.db.exec('COMMIT'));
    this.state = 'committed';
    return payload;
  }

  rollback(): void {
    if (this.state !== 'open') return;
    this.state = 'rolled back';
    try {
      this.sql.withWrites(() => this.sql.db.exec('ROLLBACK'));
    } catch {} // SQLite may have rolled back already (some errors end the transaction)
  }

  end(): void {
    clearTimeout(this.timer);
    this.rollback();
    this.markEnded();
  }

  private attempt<T>(step: () => T): T {
    if (this.failure !== undefined) throw this.failure;
    if (this.state !== 'open') {
      throw new RunnerError('transaction_ended', `the transaction was ${this.state}; its tx can no longer be used`);
    }
    try {
      return step();
    } catch (error) {
      this.failure = error as Error;
      throw error;
    }
  }
}
