import {
  AGENT_NAME_PATTERN,
  AGENT_NAME_RULE,
  ConflictError,
  didYouMean,
  InvalidInputError,
  NotFoundError,
  TurnBatch,
  inUnitOfWork,
  type Logger,
  type Migration,
  type Store,
  type StoreReader,
  type UnitOfWork,
} from '@runner/plugin-sdk';
import { checkSchedule } from './cron.js';

export const SCHEDULER_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'scheduler jobs and the history of their slots (each slot claimed once)',
    sql: `CREATE TABLE scheduler_jobs (
      name TEXT PRIMARY KEY,
      description TEXT NOT NULL DEFAULT '',
      flow TEXT,
      workflow TEXT,
      schedule TEXT NOT NULL,
      timezone TEXT NOT NULL,
      missed TEXT NOT NULL,
      missed_cap INTEGER NOT NULL,
      overlap TEXT NOT NULL,
      vars TEXT NOT NULL,
      enabled INTEGER NOT NULL,
      notify_on TEXT NOT NULL,
      notify_webhook TEXT,
      notify_email TEXT NOT NULL,
      active_since TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE scheduler_slots (
      job TEXT NOT NULL,
      kind TEXT NOT NULL,
      slot_at TEXT NOT NULL,
      outcome TEXT NOT NULL,
      master TEXT NOT NULL,
      claimed_at TEXT NOT NULL,
      started_at TEXT,
      run_id TEXT,
      run_status TEXT,
      finished_at TEXT,
      detail TEXT,
      notice TEXT,
      PRIMARY KEY (job, kind, slot_at)
    );
    CREATE INDEX scheduler_slots_open ON scheduler_slots (outcome, job);`,
  },
  {
    id: 2,
    description: "a job's own stack, read by its runs over the flow's or workflow's stack:",
    sql: 'ALTER TABLE scheduler_jobs ADD COLUMN stack TEXT;',
  },
];

export const MISSED_POLICIES = ['skip', 'run_once', 'run_all'] as const;
export const OVERLAP_POLICIES = ['skip', 'queue', 'allow'] as const;
export const NOTIFY_ON = ['never', 'failure', 'success', 'both'] as const;
export type MissedPolicy = (typeof MISSED_POLICIES)[number];
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export type NotifyOn = (typeof NOTIFY_ON)[number];

/** Most missed slots `run_all` starts after downtime (and its default). */
export const MAX_MISSED_CAP = 100;
export const DEFAULT_MISSED_CAP = 10;
export const MAX_DESCRIPTION = 500;

export interface Job {
  name: string;
  description: string;
  /** The saved flow it starts, or null when it starts a workflow file. */
  flow: string | null;
  /** The workflow file (under engine.workflow_dirs) it starts, or null when it starts a flow. */
  workflow: string | null;
  schedule: string;
  timezone: string;
  missed: MissedPolicy;
  missed_cap: number;
  overlap: OverlapPolicy;
  vars: Record<string, string>;
  /** The stack its runs read, over the flow's or workflow's own `stack:`; null: theirs. */
  stack: string | null;
  enabled: boolean;
  notify_on: NotifyOn;
  notify_webhook: string | null;
  notify_email: string[];
  /** ISO 8601: slots before it are not this job's (created, enabled or rescheduled then). */
  active_since: string;
  created_at: string;
  updated_at: string;
}

/** What a client sends to create a job (and, all optional, to change one). */
export interface JobInput {
  name?: string;
  description?: string;
  flow?: string | null;
  workflow?: string | null;
  schedule?: string;
  timezone?: string;
  missed?: string;
  missed_cap?: number;
  overlap?: string;
  vars?: Record<string, string>;
  stack?: string | null;
  enabled?: boolean;
  notify_on?: string;
  notify_webhook?: string | null;
  notify_email?: string[];
}

/**
 * Outcomes of a slot. Final: `started`, `skipped_overlap`, `missed`, `failed_to_start`. Passing:
 * `claimed` (the claim is durable, the run is being started) and `queued` (waiting, by the
 * overlap policy `queue`, for the job's previous run to end).
 */
export type SlotOutcome = 'claimed' | 'queued' | 'started' | 'skipped_overlap' | 'missed' | 'failed_to_start';

export interface Slot {
  job: string;
  /** `schedule`, or `manual` for run-now. */
  kind: 'schedule' | 'manual';
  /** ISO 8601 UTC: the time the schedule gave (run-now: when it was asked). */
  slot_at: string;
  outcome: SlotOutcome;
  /** The master that claimed it. */
  master: string;
  claimed_at: string;
  started_at: string | null;
  run_id: string | null;
  /** The run's final status once it ended (`succeeded`, `failed`, ...), null while it runs. */
  run_status: string | null;
  finished_at: string | null;
  detail: string | null;
  /** What the notifications of this slot came to. */
  notice: string | null;
}

interface JobRow extends Omit<Job, 'vars' | 'enabled' | 'notify_email' | 'missed' | 'overlap' | 'notify_on'> {
  vars: string;
  enabled: number | boolean;
  notify_email: string;
  missed: string;
  overlap: string;
  notify_on: string;
}

function fromRow(row: JobRow): Job {
  return {
    ...row,
    missed_cap: Number(row.missed_cap),
    missed: row.missed as MissedPolicy,
    overlap: row.overlap as OverlapPolicy,
    notify_on: row.notify_on as NotifyOn,
    vars: JSON.parse(row.vars) as Record<string, string>,
    enabled: Boolean(Number(row.enabled)),
    notify_email: row.notify_email === '' ? [] : row.notify_email.split(','),
  };
}

const COLUMNS = [
  'name',
  'description',
  'flow',
  'workflow',
  'schedule',
  'timezone',
  'missed',
  'missed_cap',
  'overlap',
  'vars',
  'stack',
  'enabled',
  'notify_on',
  'notify_webhook',
  'notify_email',
  'active_since',
  'created_at',
  'updated_at',
] as const;

function toRow(job: Job): (string | number | null)[] {
  const row = {
    ...job,
    vars: JSON.stringify(job.vars),
    enabled: job.enabled ? 1 : 0,
    notify_email: job.notify_email.join(','),
  };
  return COLUMNS.map((column) => row[column]);
}

const invalid = (field: string, message: string) => new InvalidInputError(`${field}: ${message}`, { field });

function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw invalid(field, `"${value}" is not one of ${allowed.join(', ')}`);
  return value as T;
}

const EMAIL = /^[^\s@,]+@[^\s@,]+$/;

/**
 * Merges `input` over `base` (a new job's defaults, or the job as stored) and checks every field,
 * naming the first one at fault. Which flow or file exists is checked by the caller.
 */
export function mergeJob(base: Job, input: JobInput): Job {
  const job: Job = { ...base };
  for (const key of Object.keys(input) as (keyof JobInput)[]) {
    const value = input[key];
    if (value !== undefined) (job as unknown as Record<string, unknown>)[key] = value;
  }
  if (typeof job.name !== 'string' || !AGENT_NAME_PATTERN.test(job.name))
    throw invalid('name', `job name ${JSON.stringify(job.name)} is not valid: use ${AGENT_NAME_RULE}`);
  if (job.description.length > MAX_DESCRIPTION) throw invalid('description', `at most ${MAX_DESCRIPTION} characters`);
  job.description = job.description.trim();
  if (input.flow) job.workflow = input.workflow ?? null;
  if (input.workflow) job.flow = input.flow ?? null;
  if (job.flow && job.workflow) throw invalid('flow', 'give a flow or a workflow file, not both');
  if (!job.flow && !job.workflow) throw invalid('workflow', 'give the workflow file (or the flow) the job starts');
  job.schedule = job.schedule.trim().replace(/\s+/g, ' ');
  checkSchedule({ expression: job.schedule, timezone: job.timezone });
  job.missed = oneOf('missed', job.missed, MISSED_POLICIES);
  job.overlap = oneOf('overlap', job.overlap, OVERLAP_POLICIES);
  job.notify_on = oneOf('notify_on', job.notify_on, NOTIFY_ON);
  if (!Number.isInteger(job.missed_cap) || job.missed_cap < 1 || job.missed_cap > MAX_MISSED_CAP)
    throw invalid('missed_cap', `a whole number from 1 to ${MAX_MISSED_CAP}`);
  for (const [name, value] of Object.entries(job.vars))
    if (typeof value !== 'string') throw invalid(`vars.${name}`, 'a var is text');
  job.stack = job.stack?.trim() || null;
  if (job.notify_webhook) {
    let url: URL;
    try {
      url = new URL(job.notify_webhook);
    } catch {
      throw invalid('notify_webhook', `"${job.notify_webhook}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw invalid('notify_webhook', 'use an http or https URL');
  } else job.notify_webhook = null;
  job.notify_email = [...new Set(job.notify_email.map((address) => address.trim()).filter(Boolean))];
  job.notify_email.forEach((address, i) => {
    if (!EMAIL.test(address)) throw invalid(`notify_email[${i}]`, `"${address}" is not an e-mail address`);
  });
  if (job.notify_on !== 'never' && !job.notify_webhook && job.notify_email.length === 0)
    throw invalid('notify_on', `notifications on ${job.notify_on} need a webhook or an e-mail address`);
  return job;
}

/** A new job's defaults before the input is merged. */
export function newJob(name: string, timezone: string, now: Date): Job {
  const at = now.toISOString();
  return {
    name,
    description: '',
    flow: null,
    workflow: null,
    schedule: '',
    timezone,
    missed: 'skip',
    missed_cap: DEFAULT_MISSED_CAP,
    overlap: 'skip',
    vars: {},
    stack: null,
    enabled: true,
    notify_on: 'never',
    notify_webhook: null,
    notify_email: [],
    active_since: at,
    created_at: at,
    updated_at: at,
  };
}

/** What a claim writes: the slot's key, its first outcome and who took it when. */
export type ClaimRow = Pick<Slot, 'job' | 'kind' | 'slot_at' | 'outcome' | 'master' | 'claimed_at' | 'detail'>;

const slotKey = (slot: Pick<ClaimRow, 'job' | 'kind' | 'slot_at'>) => `${slot.job}\0${slot.kind}\0${slot.slot_at}`;

/** Claims written in one transaction at most (bounds a journal record and a PostgreSQL transaction). */
const MAX_CLAIM_BATCH = 250;

/** The jobs and their slots in the store. Jobs are few and read at every tick: kept in memory too. */
export class JobStore {
  private readonly jobs = new Map<string, Job>();
  /** Claims asked for in one turn of the event loop, written together. */
  private readonly claims = new TurnBatch<ClaimRow, boolean>((slots) => this.writeClaims(slots), MAX_CLAIM_BATCH);
  constructor(
    private readonly store: Store,
    /** Told when telling of a job's committed change failed (the change stands). */
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  async open(): Promise<void> {
    await this.store.migrate('scheduler', SCHEDULER_MIGRATIONS);
    await this.reload();
  }

  /** Reads every job again (another master changed one). */
  async reload(): Promise<void> {
    const rows = await this.store.all<JobRow>('SELECT * FROM scheduler_jobs ORDER BY name');
    this.jobs.clear();
    for (const row of rows) this.jobs.set(row.name, fromRow(row));
  }

  /** Reads one job again; undefined once it is gone. */
  async refresh(name: string): Promise<Job | undefined> {
    const row = await this.store.get<JobRow>('SELECT * FROM scheduler_jobs WHERE name = ?', [name]);
    if (row) this.jobs.set(name, fromRow(row));
    else this.jobs.delete(name);
    return this.jobs.get(name);
  }

  list(): Job[] {
    return [...this.jobs.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(name: string): Job | undefined {
    return this.jobs.get(name);
  }

  require(name: string): Job {
    const job = this.jobs.get(name);
    if (job) return job;
    const names = [...this.jobs.keys()];
    throw new NotFoundError(
      `scheduler job "${name}" does not exist${didYouMean(name, names)} (${names.length === 0 ? 'no job exists yet' : `jobs: ${names.sort().join(', ')}`})`,
      { details: { job: name } },
    );
  }

  /** The job as the unit sees it (other masters' commits and the unit's own writes), not the copy in memory. */
  async read(tx: StoreReader, name: string): Promise<Job | undefined> {
    const row = await tx.get<JobRow>('SELECT * FROM scheduler_jobs WHERE name = ?', [name]);
    return row ? fromRow(row) : undefined;
  }

  /** Writes the new job in the caller's unit (or one of its own); the copy in memory follows the commit. */
  async insert(job: Job, unit?: UnitOfWork): Promise<void> {
    if (this.jobs.has(job.name)) throw new ConflictError(`scheduler job "${job.name}" already exists`);
    return this.inUnit(unit, async (joined) => {
      await joined.tx.run(
        `INSERT INTO scheduler_jobs (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
        toRow(job),
      );
      joined.afterCommit(() => this.refresh(job.name));
    });
  }

  replace(job: Job, unit?: UnitOfWork): Promise<void> {
    const [, ...rest] = COLUMNS;
    return this.inUnit(unit, async (joined) => {
      await joined.tx.run(`UPDATE scheduler_jobs SET ${rest.map((c) => `${c} = ?`).join(', ')} WHERE name = ?`, [
        ...toRow(job).slice(1),
        job.name,
      ]);
      joined.afterCommit(() => this.refresh(job.name));
    });
  }

  /** Deletes the job and its slots; false when the unit saw no such job. */
  delete(name: string, unit?: UnitOfWork): Promise<boolean> {
    return this.inUnit(unit, async (joined) => {
      await joined.tx.run('DELETE FROM scheduler_slots WHERE job = ?', [name]);
      const gone = await joined.tx.run('DELETE FROM scheduler_jobs WHERE name = ?', [name]);
      joined.afterCommit(() => void this.jobs.delete(name));
      return gone.changes === 1;
    });
  }

  /** Joins the caller's unit of work, or opens one: every write of a job goes through one. */
  inUnit<T>(unit: UnitOfWork | undefined, work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
    return inUnitOfWork(this.store, unit, work, (error) =>
      this.logger?.warn(`a scheduler job's change committed, but telling of it failed: ${error.message}`),
    );
  }

  /** The latest scheduled slot the job has a row for (ms), if any. */
  async lastSlot(job: string): Promise<number | undefined> {
    const row = await this.store.get<{ at: string | null }>(
      "SELECT MAX(slot_at) AS at FROM scheduler_slots WHERE job = ? AND kind = 'schedule'",
      [job],
    );
    return row?.at ? Date.parse(row.at) : undefined;
  }

  /**
   * The claim primitive: inserts the slot's unique row; true when this call inserted it (no other
   * master, and no earlier life of this one, has it). Claims asked for in the same turn go
   * together (1,000 slots due at once were 1,000 commits); each is still told whether it took its
   * own slot. A batch is all or none: when it fails, no slot of it was taken.
   */
  claim(slot: ClaimRow): Promise<boolean> {
    return this.claims.add(slot);
  }

  /**
   * PostgreSQL: one multi-row insert whose RETURNING names the rows this master took (one round
   * trip instead of one per slot). Embedded: one transaction of single-row inserts, each told by
   * its row count (a write there must go through `run`, which journals it, never a read's `all`).
   */
  private async writeClaims(slots: readonly ClaimRow[]): Promise<boolean[]> {
    const columns = '(job, kind, slot_at, outcome, master, claimed_at, detail)';
    const values = (slot: ClaimRow) => [
      slot.job,
      slot.kind,
      slot.slot_at,
      slot.outcome,
      slot.master,
      slot.claimed_at,
      slot.detail,
    ];
    if (this.store.dialect === 'postgres') {
      const taken = await this.store.withTransaction((tx) =>
        tx.all<Pick<ClaimRow, 'job' | 'kind' | 'slot_at'>>(
          `INSERT INTO scheduler_slots ${columns} VALUES ${slots.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}
           ON CONFLICT DO NOTHING RETURNING job, kind, slot_at`,
          slots.flatMap(values),
        ),
      );
      // A key asked twice in one batch was inserted once: only its first caller took it.
      const unclaimed = new Set(taken.map(slotKey));
      return slots.map((slot) => unclaimed.delete(slotKey(slot)));
    }
    const results = await this.store.transaction(
      slots.map((slot) => ({
        sql: `INSERT INTO scheduler_slots ${columns} VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        params: values(slot),
      })),
    );
    return results.map((result) => result.changes === 1);
  }

  async update(
    key: Pick<Slot, 'job' | 'kind' | 'slot_at'>,
    change: Partial<
      Pick<Slot, 'outcome' | 'started_at' | 'run_id' | 'run_status' | 'finished_at' | 'detail' | 'notice'>
    >,
  ): Promise<void> {
    const fields = Object.keys(change) as (keyof typeof change)[];
    if (fields.length === 0) return;
    await this.store.run(
      `UPDATE scheduler_slots SET ${fields.map((f) => `${f} = ?`).join(', ')} WHERE job = ? AND kind = ? AND slot_at = ?`,
      [...fields.map((f) => change[f] ?? null), key.job, key.kind, key.slot_at],
    );
  }

  /** The job's slots whose runs have not ended (started, not finished) and those waiting or being started. */
  async openSlots(job: string): Promise<Slot[]> {
    return this.store.all<Slot>(
      `SELECT * FROM scheduler_slots WHERE job = ? AND outcome IN ('claimed', 'queued', 'started') AND finished_at IS NULL ORDER BY slot_at`,
      [job],
    );
  }

  /** `openSlots` of every job at once, by job (a pass over many due jobs asks once, not once a job). */
  async openSlotsByJob(): Promise<Map<string, Slot[]>> {
    const rows = await this.store.all<Slot>(
      `SELECT * FROM scheduler_slots WHERE outcome IN ('claimed', 'queued', 'started') AND finished_at IS NULL ORDER BY job, slot_at`,
    );
    const byJob = new Map<string, Slot[]>();
    for (const row of rows) byJob.set(row.job, [...(byJob.get(row.job) ?? []), row]);
    return byJob;
  }

  /** Slots left `claimed` or `queued` by masters other than `alive` (every one of them when none is given). */
  async stranded(isAlive: (master: string) => Promise<boolean>): Promise<Slot[]> {
    const rows = await this.store.all<Slot>(
      "SELECT * FROM scheduler_slots WHERE outcome IN ('claimed', 'queued') ORDER BY slot_at",
    );
    const stranded: Slot[] = [];
    for (const row of rows) if (!(await isAlive(row.master))) stranded.push(row);
    return stranded;
  }

  async history(job: string, limit: number, offset: number): Promise<{ slots: Slot[]; total: number }> {
    const [slots, count] = await Promise.all([
      this.store.all<Slot>('SELECT * FROM scheduler_slots WHERE job = ? ORDER BY slot_at DESC, kind LIMIT ? OFFSET ?', [
        job,
        limit,
        offset,
      ]),
      this.store.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM scheduler_slots WHERE job = ?', [job]),
    ]);
    return { slots, total: Number(count?.n ?? 0) };
  }

  /** Each job's latest slot, for the list. */
  async latest(): Promise<Map<string, Slot>> {
    const rows = await this.store.all<Slot>(
      `SELECT s.* FROM scheduler_slots s JOIN (SELECT job, MAX(slot_at) AS at FROM scheduler_slots GROUP BY job) m
       ON s.job = m.job AND s.slot_at = m.at`,
    );
    return new Map(rows.map((row) => [row.job, row]));
  }
}
