import type {
  ExecutionFilter,
  Migration,
  RunRecord,
  RunStatus,
  Store,
  TaskResult,
  TaskStatus,
  WriteResult,
} from '@runner/plugin-sdk';
import { InvalidInputError } from '@runner/plugin-sdk';

export const RUN_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'runs and their task results',
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        workflow_name TEXT NOT NULL,
        status TEXT NOT NULL,
        dry_run INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        completed_at TEXT,
        duration REAL NOT NULL DEFAULT 0,
        error TEXT,
        trigger TEXT,
        counts TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX runs_by_start ON runs (started_at);
      CREATE INDEX runs_by_workflow ON runs (workflow_name, started_at);
      CREATE TABLE run_tasks (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        task TEXT NOT NULL,
        item TEXT,
        agent TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        started_at TEXT,
        completed_at TEXT,
        duration REAL NOT NULL DEFAULT 0,
        message TEXT,
        outputs TEXT,
        log TEXT NOT NULL DEFAULT '[]',
        log_truncated INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, seq)
      );`,
  },
];

interface RunRow {
  id: string;
  workflow_name: string;
  status: RunStatus;
  dry_run: number;
  started_at: string;
  completed_at: string | null;
  duration: number;
  error: string | null;
  trigger: string | null;
  counts: string;
}

interface TaskRow {
  seq: number;
  name: string;
  task: string;
  item: string | null;
  agent: string;
  status: TaskStatus;
  attempts: number;
  started_at: string | null;
  completed_at: string | null;
  duration: number;
  message: string | null;
  outputs: string | null;
  log: string;
  log_truncated: number;
}

/**
 * Executions in the store. Writes are issued in order and not awaited one by one: the store
 * applies them to memory at once (so reads see them) and groups their fsyncs; `flush` awaits
 * everything issued, and a run is reported finished only after that.
 */
export class RunStore {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly store: Store) {}

  async migrate(): Promise<void> {
    await this.store.migrate('engine', RUN_MIGRATIONS);
  }

  insertRun(run: Omit<RunRecord, 'tasks'>): Promise<WriteResult> {
    return this.track(
      this.store.run(
        'INSERT INTO runs (id, workflow_name, status, dry_run, started_at, duration, trigger, counts) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
        [
          run.id,
          run.workflowName,
          run.status,
          run.dryRun ? 1 : 0,
          run.startedAt,
          run.trigger ?? null,
          JSON.stringify(run.counts),
        ],
      ),
    );
  }

  finishRun(run: Omit<RunRecord, 'tasks'>): Promise<WriteResult> {
    return this.track(
      this.store.run('UPDATE runs SET status = ?, completed_at = ?, duration = ?, error = ?, counts = ? WHERE id = ?', [
        run.status,
        run.completedAt ?? null,
        run.duration,
        run.error ?? null,
        JSON.stringify(run.counts),
        run.id,
      ]),
    );
  }

  /** Inserts or replaces one task result (a unit is written when it starts and when it ends). */
  saveTask(runId: string, seq: number, task: TaskResult): void {
    this.track(
      this.store.run(
        `INSERT OR REPLACE INTO run_tasks (run_id, seq, name, task, item, agent, status, attempts, started_at, completed_at, duration, message, outputs, log, log_truncated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          runId,
          seq,
          task.name,
          task.task,
          task.item === undefined ? null : JSON.stringify(task.item),
          task.agent,
          task.status,
          task.attempts,
          task.startedAt ?? null,
          task.completedAt ?? null,
          task.duration,
          task.message ?? null,
          task.outputs === undefined ? null : JSON.stringify(task.outputs),
          JSON.stringify(task.log),
          task.logTruncated ? 1 : 0,
        ],
      ),
    );
  }

  /** Resolves once every write issued so far is durable; rejects with the first that failed. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  get(runId: string): RunRecord | undefined {
    const row = this.store.get<RunRow>('SELECT * FROM runs WHERE id = ?', [runId]);
    if (!row) return undefined;
    const tasks = this.store.all<TaskRow>('SELECT * FROM run_tasks WHERE run_id = ? ORDER BY seq', [runId]);
    return { ...fromRunRow(row), tasks: tasks.map(fromTaskRow) };
  }

  list(filter: ExecutionFilter = {}): { runs: Omit<RunRecord, 'tasks'>[]; total: number } {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.workflow) {
      where.push('workflow_name = ?');
      params.push(filter.workflow);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.since) {
      where.push('started_at >= ?');
      params.push(sinceToIso(filter.since));
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runs ${clause}`, params)?.n ?? 0;
    const rows = this.store.all<RunRow>(
      `SELECT * FROM runs ${clause} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`,
      [...params, filter.limit ?? 50, filter.offset ?? 0],
    );
    return { runs: rows.map(fromRunRow), total };
  }

  /** Removes the oldest finished runs beyond `keep`; a bounded history keeps the store small. */
  async prune(keep: number): Promise<number> {
    const cutoff = this.store.get<{ started_at: string }>(
      'SELECT started_at FROM runs ORDER BY started_at DESC LIMIT 1 OFFSET ?',
      [keep],
    );
    if (!cutoff) return 0;
    const [, removed] = await this.store.transaction([
      {
        sql: "DELETE FROM run_tasks WHERE run_id IN (SELECT id FROM runs WHERE started_at <= ? AND status <> 'running')",
        params: [cutoff.started_at],
      },
      { sql: "DELETE FROM runs WHERE started_at <= ? AND status <> 'running'", params: [cutoff.started_at] },
    ]);
    return removed.changes;
  }

  private track<T>(write: Promise<T>): Promise<T> {
    this.pending.add(write);
    const settle = () => void this.pending.delete(write);
    write.then(settle, settle);
    return write;
  }
}

function fromRunRow(row: RunRow): Omit<RunRecord, 'tasks'> {
  return {
    id: row.id,
    workflowName: row.workflow_name,
    status: row.status,
    dryRun: row.dry_run === 1,
    startedAt: row.started_at,
    completedAt: row.completed_at ?? undefined,
    duration: row.duration,
    error: row.error ?? undefined,
    trigger: row.trigger ?? undefined,
    counts: JSON.parse(row.counts) as RunRecord['counts'],
  };
}

function fromTaskRow(row: TaskRow): TaskResult {
  return {
    name: row.name,
    task: row.task,
    item: row.item === null ? undefined : (JSON.parse(row.item) as TaskResult['item']),
    agent: row.agent,
    status: row.status,
    attempts: row.attempts,
    startedAt: row.started_at ?? undefined,
    completedAt: row.completed_at ?? undefined,
    duration: row.duration,
    message: row.message ?? undefined,
    outputs: row.outputs === null ? undefined : (JSON.parse(row.outputs) as TaskResult['outputs']),
    log: JSON.parse(row.log) as TaskResult['log'],
    logTruncated: row.log_truncated === 1,
  };
}

/** ISO 8601 as given, or Unix seconds. */
function sinceToIso(since: string): string {
  if (/^\d+(\.\d+)?$/.test(since)) return new Date(Number(since) * 1000).toISOString();
  const date = new Date(since);
  if (Number.isNaN(date.getTime()))
    throw new InvalidInputError(`since: expected an ISO 8601 time or Unix seconds, got "${since}"`, { field: 'since' });
  return date.toISOString();
}
