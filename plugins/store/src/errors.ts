import { ConflictError, RunnerError } from '@runner/plugin-sdk';

/** A statement that SQLite refused; the message is SQLite's, followed by the statement. */
export function sqlError(cause: unknown, sql: string): RunnerError {
  const message = cause instanceof Error ? cause.message : String(cause);
  const shown = sql.length > 200 ? `${sql.slice(0, 200)}...` : sql;
  const text = `${message} (statement: ${shown.trim()})`;
  // A violated constraint is the caller's conflict (a duplicate name...), not a server fault.
  if (/constraint failed/i.test(message)) return new ConflictError(text, { cause, details: { sql } });
  return new RunnerError('sql_error', text, { cause, details: { sql } });
}

export function storeClosedError(dir: string): RunnerError {
  return new RunnerError('store_closed', `the store in ${dir} is closed`, { status: 503 });
}

/** The journal could not be written: memory may hold writes the disk lacks, so writes stop. */
export function storeFailedError(path: string, cause: unknown): RunnerError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new RunnerError(
    'store_failed',
    `the journal ${path} could not be written (${reason}); the store refuses writes until runner restarts`,
    { cause, status: 503 },
  );
}

/** ENOSPC or EDQUOT: a condition that passes when space is freed, unlike other write errors. */
export function isOutOfSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Writes refused while the journal waits for space (see JournalWriter: it retries by itself). */
export function storeDiskFullError(dir: string, cause: unknown): RunnerError {
  const code = (cause as NodeJS.ErrnoException | null)?.code ?? 'ENOSPC';
  return new RunnerError(
    'store_disk_full',
    `the file system holding the store ${dir} is full (${code}): writes are refused until space is freed ` +
      `there, then they resume by themselves; reads still answer`,
    { cause, status: 503, details: { path: dir, errno: code } },
  );
}

/** What GET /api/v1/health says while the store waits for space (public: no path). */
export const DISK_FULL_CONDITION =
  "the store's file system is full: writes are refused (503 store_disk_full) until space is freed, reads answer";

export function journalCorruptError(path: string, offset: number, reason: string): RunnerError {
  return new RunnerError(
    'journal_corrupt',
    `journal ${path} is corrupt at offset ${offset} (${reason}) and valid records follow, so it is not a torn ` +
      `last write; refusing to start. Restore a backup (runner db restore) or move the journal aside to ` +
      `accept losing the writes after that offset`,
    { details: { path, offset, reason } },
  );
}
