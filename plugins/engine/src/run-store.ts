import type {
  ExecutionFilter,
  Migration,
  Redactor,
  RetentionPolicy,
  RunRecord,
  RunRequest,
  RunStatus,
  RunTrigger,
  Store,
  TaskResult,
  TaskStatus,
  WriteResult,
} from '@runner/plugin-sdk';
import { reconcileRuns, type InterruptedRun, type ReconcileOptions, type RunLeases } from './run-lifecycle.js';
import type { RetentionSettings } from './retention-config.js';
import { engineRetentionPolicies } from './run-retention.js';
import { RUN_LIFECYCLE_MIGRATIONS, RUN_LIFECYCLE_OWNER } from './run-lifecycle-schema.js';
import { RunList, type HistogramFilter, type RunPage } from './run-list.js';
import type { LogOrder } from './log-followers.js';

/** A run's units' logs as stored, and the order their lines were written in. */
export interface StoredRunLog {
  units: { name: string; agent: string; log: string }[];
  order?: LogOrder;
}

/** run_inputs.request of a run whose inputs held a secret (not valid JSON of a request). */
const WITHHELD = 'withheld: held a secret';
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
  {
    id: 2,
    description: 'who started and who cancelled a run',
    sql: `
      ALTER TABLE runs ADD COLUMN "user" TEXT;
      ALTER TABLE runs ADD COLUMN cancelled_by TEXT;`,
  },
  {
    id: 3,
    // A table of its own: the inputs (workflow text among them) are read only to run again, never
    // by the lists.
    description: 'what a run was started with, to run it again',
    sql: `
      CREATE TABLE run_inputs (run_id TEXT PRIMARY KEY, request TEXT NOT NULL);
      ALTER TABLE runs ADD COLUMN rerun_of TEXT;`,
  },
  {
    id: 4,
    // Units store their logs one unit at a time; this says how their lines interleaved.
    description: 'the order a run wrote its log lines in',
    sql: 'ALTER TABLE runs ADD COLUMN log_order TEXT;',
  },
  {
    id: 5,
    description: 'the stack (environment) a run used',
    sql: `
      ALTER TABLE runs ADD COLUMN stack TEXT;
      CREATE INDEX runs_by_stack ON runs (stack, started_at);`,
  },
];

const TRIGGERS: readonly RunTrigger[] = ['cli', 'api', 'scheduler', 'hook', 'flow'];

/** A stored trigger as the type knows it; a value this version does not know reads as absent. */
function triggerOf(value: string | null): RunTrigger | undefined {
  return TRIGGERS.includes(value as RunTrigger) ? (value as RunTrigger) : undefined;
}

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
  user: string | null;
  cancelled_by: string | null;
  rerun_of: string | null;
  stack?: string | null;
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

const TASK_COLUMNS_BUT_LOG =
  'seq, name, task, item, agent, status, attempts, started_at, completed_at, duration, message, outputs, log_truncated';

/** Task results written in one transaction at most (bounds a journal record). */
const MAX_BATCH = 100;

const SAVE_TASK_SQL = `INSERT INTO run_tasks (run_id, seq, name, task, item, agent, status, attempts, started_at, completed_at, duration, message, outputs, log, log_truncated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, seq) DO UPDATE SET name = excluded.name, task = excluded.task, item = excluded.item,
           agent = excluded.agent, status = excluded.status, attempts = excluded.attempts,
           started_at = excluded.started_at, completed_at = excluded.completed_at, duration = excluded.duration,
           message = excluded.message, outputs = excluded.outputs, log = excluded.log,
           log_truncated = excluded.log_truncated`;

/**
 * Executions in the store. Writes are issued in order and not awaited one by one: the store
 * applies them to memory at once (so reads see them) and groups their fsyncs; `flush` awaits
 * everything issued, and a run is reported finished only after that.
 *
 * Task results are queued and written together, one transaction at the end of the event loop's
 * turn (or every MAX_BATCH): sql.js spends about 60 us on a transaction of its own, against 6-10 us
 * for a row among others, which made the store a good part of a trivial task's cost. Reads show
 * queued results as if written, and the run's final write and `flush` write the queue first.
 */
export class RunStore {
  private readonly pending = new Set<Promise<unknown>>();
  /** Results to write, by run and position. */
  private readonly queued = new Map<string, Map<number, TaskResult>>();
  /**
   * On PostgreSQL, results whose write is issued but not committed (reads see them only at
   * COMMIT), with that write: shown like queued ones, and awaited before the run's final status.
   * The embedded store shows a write in memory as it is issued and needs neither.
   */
  private readonly inFlight = new Map<string, Map<number, TaskResult>>();
  private lastTaskWrite: Promise<unknown> = Promise.resolve();
  private queuedCount = 0;
  private batchScheduled = false;
  private readonly lists: RunList;
  private leases: RunLeases | undefined;

  /**
   * `resultBytes` caps what one task's message and outputs take in the record (config
   * engine.task_result_bytes): like its log, a task must not grow a run record without bound.
   */
  constructor(
    private readonly store: Store,
    private readonly resultBytes = DEFAULT_RESULT_BYTES,
    /** Masks secrets in everything written: a run record is stored and served. */
    private readonly redactor?: Redactor,
  ) {
    this.lists = new RunList(store, (row) => fromRunRow(row as unknown as RunRow));
  }

  async migrate(): Promise<void> {
    await this.store.migrate('engine', RUN_MIGRATIONS);
    await this.store.migrate(RUN_LIFECYCLE_OWNER, RUN_LIFECYCLE_MIGRATIONS);
  }

  /**
   * `request`: what the run was started with, kept to run it again. Stored as given only when it
   * holds nothing the redactor would mask: a registered secret value or a secret-named field must
   * never reach the disk (the store is a file), and a masked copy would start a different run. Such
   * a run keeps a marker instead, and Run again says why it cannot.
   */
  insertRun(run: Omit<RunRecord, 'tasks'>, request?: RunRequest): Promise<WriteResult> {
    const statements = [
      {
        sql: 'INSERT INTO runs (id, workflow_name, status, dry_run, started_at, duration, trigger, "user", rerun_of, stack, counts, lease_owner, lease_expires_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)',
        params: [
          run.id,
          run.workflowName,
          run.status,
          run.dryRun ? 1 : 0,
          run.startedAt,
          run.trigger ?? null,
          run.user ?? null,
          run.rerunOf ?? null,
          run.stack ?? null,
          JSON.stringify(run.counts),
          ...(this.leases?.params() ?? [null, null]),
        ],
      },
    ];
    if (request)
      statements.push({
        sql: 'INSERT INTO run_inputs (run_id, request) VALUES (?, ?)',
        params: [
          run.id,
          this.redactor && this.redactor.redact(request) !== request ? WITHHELD : JSON.stringify(request),
        ],
      });
    const write = this.track(
      statements.length === 1
        ? this.store.run(statements[0].sql, statements[0].params)
        : this.store.transaction(statements).then(([inserted]) => inserted),
    );
    this.lists.statusChanged(run.workflowName, undefined, run.status);
    return write;
  }

  /** `logOrder`: how the units' lines interleaved as they were written (log-followers.ts). */
  async finishRun(run: Omit<RunRecord, 'tasks'>, logOrder?: LogOrder): Promise<WriteResult> {
    // The run's results are durable no later than its final status.
    this.writeQueued();
    if (this.store.dialect === 'postgres') await this.lastTaskWrite.catch(() => undefined);
    const before = await this.lists.current(run.id);
    const write = this.track(
      this.store.run(
        'UPDATE runs SET status = ?, completed_at = ?, duration = ?, error = ?, cancelled_by = ?, counts = ?, log_order = ?, lease_expires_at = NULL WHERE id = ?',
        [
          run.status,
          run.completedAt ?? null,
          run.duration,
          run.error === undefined ? null : this.redactor ? this.redactor.redactText(run.error) : run.error,
          run.cancelledBy ?? null,
          JSON.stringify(run.counts),
          logOrder === undefined ? null : JSON.stringify(logOrder),
          run.id,
        ],
      ),
    );
    if (before) this.lists.statusChanged(before.workflow, before.status, run.status);
    return write;
  }

  /**
   * Inserts or replaces one task result (the engine writes a unit once, when it ends), with the
   * others of this turn. The result must not change afterwards: it is read when written.
   */
  queueTask(runId: string, seq: number, task: TaskResult): void {
    let run = this.queued.get(runId);
    if (run === undefined) this.queued.set(runId, (run = new Map()));
    run.set(seq, this.redactor ? this.redactor.redact(task) : task);
    if (++this.queuedCount >= MAX_BATCH) {
      this.writeQueued();
    } else if (!this.batchScheduled) {
      this.batchScheduled = true;
      setImmediate(() => {
        this.batchScheduled = false;
        this.writeQueued();
      });
    }
  }

  /**
   * Resolves once every write issued so far is durable; rejects with the first that failed. Writes
   * issued meanwhile are not waited for (the journal makes writes durable in order): under a steady
   * stream of runs there is never a moment with nothing pending, and waiting for one held every
   * run's end for seconds (test/bench/rest-throughput.mjs at 200 runs/s: runs kept starting and
   * none ended for 5 s, then a thousand ended at once).
   */
  async flush(): Promise<void> {
    this.writeQueued();
    await Promise.all([...this.pending]);
  }

  /** Resolves once nothing is pending, writes issued while it waits included (the plugin's stop). */
  async drain(): Promise<void> {
    this.writeQueued();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private writeQueued(): void {
    if (this.queuedCount === 0) return;
    const statements: { sql: string; params: (string | number | null)[] }[] = [];
    for (const [runId, tasks] of this.queued) {
      for (const [seq, task] of tasks)
        statements.push({ sql: SAVE_TASK_SQL, params: taskParams(runId, seq, task, this.resultBytes) });
    }
    const written = this.store.dialect === 'postgres' ? new Map(this.queued) : undefined;
    this.queued.clear();
    this.queuedCount = 0;
    // Embedded: applied to memory before this returns, so reads find the rows as the queue lets
    // them go. PostgreSQL: shown from `inFlight` until committed.
    const write = this.track(this.store.transaction(statements));
    this.lastTaskWrite = write;
    if (written !== undefined) {
      for (const [runId, tasks] of written)
        this.inFlight.set(runId, new Map([...(this.inFlight.get(runId) ?? []), ...tasks]));
      const settle = () => {
        for (const [runId, tasks] of written) {
          const shown = this.inFlight.get(runId);
          for (const [seq, task] of tasks) if (shown?.get(seq) === task) shown.delete(seq);
          if (shown?.size === 0) this.inFlight.delete(runId);
        }
      };
      write.then(settle, settle);
    }
  }

  /**
   * The run and its task results by position, queued ones included. `unwritten` are results the
   * engine has not handed over yet (units still running, by position): shown in their place, as
   * they are now.
   */
  async get(
    runId: string,
    unwritten?: ReadonlyMap<number, TaskResult>,
    options: { log?: boolean } = {},
  ): Promise<RunRecord | undefined> {
    // Taken now, as the store will give them back (JSON round trip): copies, while a running unit
    // changes during the reads.
    const overlay = new Map<number, TaskResult>();
    for (const source of [this.inFlight.get(runId), this.queued.get(runId), unwritten]) {
      for (const [seq, result] of source ?? [])
        overlay.set(seq, asStored(options.log === false ? { ...result, log: [] } : result, this.resultBytes));
    }
    const [row, rows] = await Promise.all([
      this.store.get<RunRow>('SELECT * FROM runs WHERE id = ?', [runId]),
      // Without logs the log column is not even read: it is most of a long run's record.
      this.store.all<TaskRow>(
        options.log === false
          ? `SELECT ${TASK_COLUMNS_BUT_LOG}, '[]' AS log FROM run_tasks WHERE run_id = ? ORDER BY seq`
          : 'SELECT * FROM run_tasks WHERE run_id = ? ORDER BY seq',
        [runId],
      ),
    ]);
    if (!row) return undefined;
    if (overlay.size === 0) return { ...fromRunRow(row), tasks: rows.map(fromTaskRow) };
    const bySeq = new Map<number, TaskResult>(rows.map((r) => [r.seq, fromTaskRow(r)]));
    for (const [seq, result] of overlay) bySeq.set(seq, result);
    const tasks = [...bySeq].sort((a, b) => a[0] - b[0]).map(([, result]) => result);
    return { ...fromRunRow(row), tasks };
  }

  /**
   * Each written unit's log as stored (JSON text, not parsed), in position order, with its task
   * name and agent (the run log reader parses only the lines a page shows), and the order the
   * lines were written in (absent for runs recorded before it was kept).
   */
  async logTexts(runId: string): Promise<StoredRunLog> {
    const [units, run] = await Promise.all([
      this.store.all<StoredRunLog['units'][number]>(
        'SELECT name, agent, log FROM run_tasks WHERE run_id = ? ORDER BY seq',
        [runId],
      ),
      this.store.get<{ log_order: string | null }>('SELECT log_order FROM runs WHERE id = ?', [runId]),
    ]);
    return { units, ...(run?.log_order ? { order: JSON.parse(run.log_order) as LogOrder } : {}) };
  }

  /** What a run was started with; undefined for an unknown run or one recorded before runs kept it. */
  async request(runId: string): Promise<RunRequest | 'withheld' | undefined> {
    const row = await this.store.get<{ request: string }>('SELECT request FROM run_inputs WHERE run_id = ?', [runId]);
    if (!row) return undefined;
    return row.request === WITHHELD ? 'withheld' : (JSON.parse(row.request) as RunRequest);
  }

  /** Runs started from now on are leased to this process (run-lifecycle.ts). */
  useLeases(leases: RunLeases): void {
    this.leases = leases;
  }

  /** Ends runs a dead process left running (run-lifecycle.ts); returns them. */
  async reconcile(options: Omit<ReconcileOptions, 'store'>): Promise<InterruptedRun[]> {
    const interrupted = await reconcileRuns({ ...options, store: this.store });
    if (interrupted.length > 0) this.lists.reset();
    return interrupted;
  }

  /** Forgets the kept first pages and counts: another master changed runs. */
  forgetLists(): void {
    this.lists.reset();
  }

  /** Runs, newest first, with the total matching (see RunList for what keeps this fast). */
  list(filter: ExecutionFilter = {}): Promise<RunPage> {
    return this.lists.list(filter);
  }

  /** Runs over time by status (the executions page's chart). */
  histogram(filter: HistogramFilter): ReturnType<RunList['histogram']> {
    return this.lists.histogram(filter);
  }

  /** What retention removes, as the store's background passes ask (run-retention.ts). */
  retentionPolicies(settings: RetentionSettings): RetentionPolicy[] {
    return engineRetentionPolicies(this.store, settings, () => this.lists.reset());
  }

  private track<T>(write: Promise<T>): Promise<T> {
    this.pending.add(write);
    const settle = () => void this.pending.delete(write);
    write.then(settle, settle);
    return write;
  }
}

export const DEFAULT_RESULT_BYTES = 256 * 1024;

/**
 * A task's message and outputs as the record keeps them: each within `cap` bytes of UTF-8 (JSON
 * for outputs), else replaced by a note saying what was dropped. Later tasks of the run still saw
 * the whole outputs: only the record is capped.
 */
function cappedResult(task: TaskResult, cap: number): { message?: string; outputs?: string } {
  let message = task.message;
  if (message !== undefined && Buffer.byteLength(message) > cap) {
    const kept = Buffer.from(message)
      .subarray(0, cap)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    message = `${kept} … [truncated: the message has ${Buffer.byteLength(message)} bytes; engine.task_result_bytes is ${cap}]`;
  }
  let outputs = task.outputs === undefined ? undefined : JSON.stringify(task.outputs);
  if (outputs !== undefined && Buffer.byteLength(outputs) > cap) {
    outputs = JSON.stringify({
      truncated: `the outputs have ${Buffer.byteLength(outputs)} bytes of JSON; engine.task_result_bytes is ${cap}, so the record does not keep them (later tasks of the run saw them whole)`,
    });
  }
  return { message, outputs };
}

function taskParams(runId: string, seq: number, task: TaskResult, cap: number): (string | number | null)[] {
  const { message, outputs } = cappedResult(task, cap);
  return [
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
    message ?? null,
    outputs ?? null,
    JSON.stringify(task.log),
    task.logTruncated ? 1 : 0,
  ];
}

function asStored(task: TaskResult, cap: number): TaskResult {
  const { message, outputs } = cappedResult(task, cap);
  return {
    ...task,
    message,
    item: task.item === undefined ? undefined : (JSON.parse(JSON.stringify(task.item)) as TaskResult['item']),
    outputs: outputs === undefined ? undefined : (JSON.parse(outputs) as TaskResult['outputs']),
    log: JSON.parse(JSON.stringify(task.log)) as TaskResult['log'],
  };
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
    trigger: triggerOf(row.trigger),
    ...(row.user === null ? {} : { user: row.user }),
    ...(row.cancelled_by === null ? {} : { cancelledBy: row.cancelled_by }),
    ...(row.rerun_of === null || row.rerun_of === undefined ? {} : { rerunOf: row.rerun_of }),
    ...(row.stack === null || row.stack === undefined ? {} : { stack: row.stack }),
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
