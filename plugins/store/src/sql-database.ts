import type { BindParams, Database, Statement } from 'sql.js';
import { InvalidInputError, RunnerError, type WriteResult } from '@runner/plugin-sdk';
import { sqlError } from './errors.js';
import type { JournalEntry, JournalStatement } from './journal.js';

const STATEMENT_CACHE_SIZE = 256;
const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i;
const LEADING_COMMENTS = /^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/;

function isTransactionControl(sql: string): boolean {
  return TRANSACTION_CONTROL.test(sql.replace(LEADING_COMMENTS, ''));
}

export const INTERNAL_TABLES = `
  CREATE TABLE IF NOT EXISTS _store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS _migrations (
    owner TEXT NOT NULL, id INTEGER NOT NULL, description TEXT NOT NULL, applied_at TEXT NOT NULL,
    PRIMARY KEY (owner, id)
  );`;

/**
 * The in-memory SQLite database (sql.js) and what runs SQL on it: a cache of prepared statements,
 * journal entries applied as one statement or one transaction, scripts, and the `query_only`
 * switch that keeps reads from writing. The store (sql-store.ts) decides what is durable.
 */
export class SqlDatabase {
  private readonly statements = new Map<string, Statement>();

  constructor(readonly db: Database) {}

  /** Runs an entry; on failure rolls back whatever it did and throws. Shared by writes and replay. */
  apply(entry: JournalEntry): WriteResult[] {
    if (entry.mode === 'run') return [this.execute(entry.statements[0])];
    this.db.exec('BEGIN');
    try {
      const results = entry.statements.map((s) => this.execute(s));
      try {
        this.db.exec('COMMIT');
      } catch (error) {
        throw sqlError(error, 'COMMIT');
      }
      return results;
    } catch (error) {
      try {
        this.db.exec('ROLLBACK');
      } catch {} // SQLite may have rolled back already (some errors end the transaction)
      throw error;
    }
  }
  execute(statement: JournalStatement): WriteResult {
    if (statement.script) {
      this.executeScript(statement.sql);
    } else {
      const prepared = this.statement(statement.sql);
      try {
        if (statement.params !== undefined && statement.params !== null) {
          prepared.bind(statement.params as BindParams);
        }
        prepared.step();
      } catch (error) {
        throw sqlError(error, statement.sql);
      } finally {
        prepared.reset();
      }
    }
    return { changes: this.db.getRowsModified(), lastInsertRowid: this.lastInsertRowid() };
  }
  executeScript(sql: string): void {
    let iterator;
    try {
      iterator = this.db.iterateStatements(sql);
      for (const statement of iterator) {
        try {
          if (isTransactionControl(statement.getSQL())) {
            throw new InvalidInputError(
              `"${statement.getSQL().trim()}" controls the transaction the store runs this script in; remove it`,
            );
          }
          while (statement.step());
        } finally {
          statement.free();
        }
      }
    } catch (error) {
      if (error instanceof RunnerError) throw error;
      throw sqlError(error, sql);
    }
  }
  lastInsertRowid(): number {
    const statement = this.statement('SELECT last_insert_rowid()');
    try {
      statement.step();
      return statement.get()[0] as number;
    } finally {
      statement.reset();
    }
  }
  /**
   * Reads run with `query_only` on, so a write slipped into `all`/`get` fails instead of changing
   * memory behind the journal's back; writes switch it off for their synchronous duration. Not
   * prepared once: this pragma acts when compiled, so a prepared copy does nothing when stepped.
   */
  withWrites<T>(fn: () => T): T {
    this.db.exec('PRAGMA query_only = OFF');
    try {
      return fn();
    } finally {
      this.db.exec('PRAGMA query_only = ON');
    }
  }
  /** A cached prepared statement; refuses SQL holding more than one statement. */
  statement(sql: string): Statement {
    const cached = this.statements.get(sql);
    if (cached !== undefined) {
      // Map order is insertion order: re-inserting keeps the most used at the end.
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    let first: Statement | undefined;
    try {
      const iterator = this.db.iterateStatements(sql);
      const step = iterator.next();
      if (step.done) throw new InvalidInputError(`no SQL statement in "${sql}"`, { field: 'sql' });
      first = step.value;
      if (iterator.getRemainingSQL().trim() !== '') {
        const second = iterator.next();
        if (!second.done) {
          second.value.free();
          throw new InvalidInputError(`one statement expected, got several: "${sql}"; use transaction()`, {
            field: 'sql',
          });
        }
      }
      if (isTransactionControl(sql) || /\bquery_only\b/i.test(sql)) {
        throw new InvalidInputError(`"${sql.trim()}" is not allowed; use transaction() for atomic groups`, {
          field: 'sql',
        });
      }
    } catch (error) {
      first?.free();
      if (error instanceof RunnerError) throw error;
      throw sqlError(error, sql);
    }
    if (this.statements.size >= STATEMENT_CACHE_SIZE) {
      const [oldestSql, oldest] = this.statements.entries().next().value as [string, Statement];
      this.statements.delete(oldestSql);
      oldest.free();
    }
    this.statements.set(sql, first);
    return first;
  }
  freeStatements(): void {
    for (const statement of this.statements.values()) statement.free();
    this.statements.clear();
  }
}
