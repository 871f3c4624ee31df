import {
  InvalidInputError,
  messageOf,
  type FlowsService,
  type Logger,
  type RunRecord,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import type { Clock } from './clock.js';
import { nextSlots, slotsBetween, type CronSchedule } from './cron.js';
import type { Job, JobStore, Slot } from './job-store.js';
import type { LatenessObserver, StartKind } from './metrics.js';
import { wants, type Notifier } from './notify.js';

/** Missed slots listed one by one after downtime (older ones are told of in the oldest's detail). */
export const MAX_LISTED_MISSED = 100;
/** The longest the loop sleeps: it looks at changed jobs and waiting slots at least this often. */
const MAX_SLEEP_MS = 1_000;
/** Slots of different jobs started at once (each is a claim and a run start). */
const PARALLEL_STARTS = 64;

export interface SchedulerOptions {
  jobs: JobStore;
  clock: Clock;
  masterId: string;
  engine: WorkflowEngine;
  /** The saved flows (optional: without the flows plugin a flow job fails to start, saying so). */
  flows?: FlowsService;
  /** engine.workflow_dirs, absolute: the only place a job's workflow file is read from. */
  workflowDirs: string[];
  notifier: Notifier;
  logger: Logger;
  /** A slot first seen later than this after its time is missed (the missed-run policy decides). */
  missedAfterMs: number;
  /** Whether a master is alive (ClusterRef), to take over what a dead one left half done. */
  isAlive: (master: string) => Promise<boolean>;
  /** Test only: wait this long after each claim before starting its run (a SIGKILL lands there). */
  holdAfterClaimMs?: number;
  /** Told each scheduled slot's start lateness (the metrics plugin's histogram, when there is one). */
  lateness?: LatenessObserver;
}

/** The detail of a slot started by the missed-run policy. */
const CATCH_UP = 'catch-up of a missed slot';

type Key = Pick<Slot, 'job' | 'kind' | 'slot_at'>;

const iso = (ms: number) => new Date(ms).toISOString();
const scheduleOf = (job: Job): CronSchedule => ({ expression: job.schedule, timezone: job.timezone });

/**
 * The durable loop. Each job has a cursor: the last slot considered (from the store at start: the
 * latest slot row, or when the job became active). Every pass takes the slots between the cursor
 * and now, decides each (started, queued, skipped_overlap, missed) and claims it with a unique
 * (job, slot) row before anything runs: whoever inserts it, on whichever master, is the only one
 * to act on it, and a restart finds it taken.
 */
export class Scheduler {
  private readonly cursors = new Map<string, { after: number; next: number | undefined; stamp: string }>();
  private readonly stop = new AbortController();
  private wakeUp = new AbortController();
  private loop?: Promise<void>;
  private readonly pending = new Set<Promise<unknown>>();
  /** Jobs with a slot this master holds `queued` (only they are looked at for a start each pass). */
  private readonly waiting = new Set<string>();

  constructor(private readonly options: SchedulerOptions) {}

  /** Starts the loop: first the slots a dead master left half done, then a pass per due slot. */
  start(): void {
    this.loop = this.run();
  }

  async close(): Promise<void> {
    this.stop.abort();
    this.wakeUp.abort();
    await this.loop;
    await Promise.allSettled([...this.pending]);
  }

  /** Ends the current sleep (a job changed, a run ended). */
  wake(): void {
    this.wakeUp.abort();
  }

  private async run(): Promise<void> {
    const { clock, logger } = this.options;
    await this.recover().catch((error) =>
      logger.warn(`scheduler: taking over stranded slots failed: ${messageOf(error)}`),
    );
    while (!this.stop.signal.aborted) {
      try {
        await this.tick();
      } catch (error) {
        logger.error(`scheduler pass failed: ${messageOf(error)}`);
      }
      if (this.stop.signal.aborted) break;
      if (this.wakeUp.signal.aborted) this.wakeUp = new AbortController();
      const due = this.nextDue();
      const wait = Math.min(MAX_SLEEP_MS, due === undefined ? MAX_SLEEP_MS : Math.max(0, due - clock.now()));
      await clock.sleep(wait, AbortSignal.any([this.stop.signal, this.wakeUp.signal]));
    }
  }

  /** When the earliest known slot is due (the loop sleeps until then). */
  nextDue(): number | undefined {
    let due: number | undefined;
    for (const cursor of this.cursors.values())
      if (cursor.next !== undefined && (due === undefined || cursor.next < due)) due = cursor.next;
    return due;
  }

  /** Forgets what the loop knows of a job (changed, enabled, deleted): read again at the next pass. */
  forget(name: string): void {
    this.cursors.delete(name);
    this.wake();
  }

  /** The next `count` times the job fires (none when disabled). */
  nextRuns(job: Job, count = 5): string[] {
    if (!job.enabled) return [];
    const from = Math.max(this.options.clock.now(), Date.parse(job.active_since));
    return nextSlots(scheduleOf(job), from, count).map(iso);
  }

  /** One pass: every job's due slots, then waiting slots whose turn came. */
  async tick(): Promise<void> {
    const now = this.options.clock.now();
    const due: { job: Job; slots: number[]; more: boolean }[] = [];
    for (const job of this.options.jobs.list()) {
      if (!job.enabled) continue;
      const cursor = await this.cursorOf(job);
      if (cursor.next === undefined || cursor.next > now) continue;
      const { slots, more, next } = this.dueSlots(job, cursor, now);
      this.cursors.set(job.name, { after: slots.at(-1) ?? now, next, stamp: cursor.stamp });
      due.push({ job, slots, more });
    }
    // The slots still open, of every job at once: most passes find none, and a job's first slot
    // of the pass needs no look-up of its own (its later ones do: the first may have started).
    const open = due.length > 0 ? await this.options.jobs.openSlotsByJob() : new Map<string, Slot[]>();
    const work = due.map(
      ({ job, slots, more }) =>
        () =>
          this.decide(job, slots, more, now, open.get(job.name) ?? []).catch((error) => {
            // Read the cursor again from the store next pass: what was claimed stays claimed.
            this.cursors.delete(job.name);
            this.options.logger.warn(`scheduler: job ${job.name}: ${messageOf(error)}`);
          }),
    );
    await inBatches(work, PARALLEL_STARTS);
    await this.startQueued();
  }

  /**
   * The job's slots in (cursor, now] and the one after them. Mostly that is the cursor's next
   * slot alone, known already, so one cron walk (to the slot after it) does; a master that was
   * away walks the whole span (slotsBetween: at most the latest listed, `more` if older ones exist).
   */
  private dueSlots(
    job: Job,
    cursor: { after: number; next: number | undefined },
    now: number,
  ): { slots: number[]; more: boolean; next: number | undefined } {
    const first = cursor.next!;
    const following = nextSlots(scheduleOf(job), first, 1)[0];
    if (following === undefined || following > now) return { slots: [first], more: false, next: following };
    const { slots, more } = slotsBetween(scheduleOf(job), cursor.after, now, MAX_LISTED_MISSED + MAX_LISTED_MISSED);
    return { slots, more, next: nextSlots(scheduleOf(job), slots.at(-1) ?? now, 1)[0] };
  }

  private async cursorOf(job: Job): Promise<{ after: number; next: number | undefined; stamp: string }> {
    const known = this.cursors.get(job.name);
    if (known && known.stamp === job.updated_at) return known;
    const last = await this.options.jobs.lastSlot(job.name);
    const after = Math.max(last ?? 0, Date.parse(job.active_since));
    const cursor = { after, next: nextSlots(scheduleOf(job), after, 1)[0], stamp: job.updated_at };
    this.cursors.set(job.name, cursor);
    return cursor;
  }

  /**
   * Applies the missed-run policy to overdue slots, then fires the rest in order. `open`: the
   * job's open slots as the pass found them, good for its first overlap look-up only.
   */
  private async decide(job: Job, slots: number[], more: boolean, now: number, open: Slot[]): Promise<void> {
    let known: Slot[] | undefined = open;
    const openNow = () => {
      const found = known;
      known = undefined;
      return found;
    };
    const overdue = slots.filter((slot) => now - slot > this.options.missedAfterMs);
    const onTime = slots.slice(overdue.length);
    const chosen =
      job.missed === 'skip' ? [] : job.missed === 'run_once' ? overdue.slice(-1) : overdue.slice(-job.missed_cap);
    const missed = overdue.slice(0, overdue.length - chosen.length);
    const policy = `missed while no master ran the scheduler (missed: ${job.missed}${job.missed === 'run_all' ? `, cap ${job.missed_cap}` : ''})`;
    for (const [i, slot] of missed.entries())
      await this.claim(
        { job: job.name, kind: 'schedule', slot_at: iso(slot) },
        'missed',
        i === 0 && more ? `${policy}; older slots are not listed` : policy,
      );
    // run_all's catch-up runs go one after another (all at once only with overlap: allow).
    if (job.missed === 'run_all' && job.overlap !== 'allow' && chosen.length > 1) {
      for (const slot of chosen)
        await this.claim({ job: job.name, kind: 'schedule', slot_at: iso(slot) }, 'queued', CATCH_UP);
      known = undefined;
      await this.startQueued(job.name);
    } else for (const slot of chosen) await this.fire(job, slot, CATCH_UP, openNow());
    for (const slot of onTime) await this.fire(job, slot, null, openNow());
  }

  /** Inserts the slot's row; true when this call took it. */
  private async claim(key: Key, outcome: Slot['outcome'], detail: string | null = null): Promise<boolean> {
    const claimed = await this.options.jobs.claim({
      ...key,
      outcome,
      detail,
      master: this.options.masterId,
      claimed_at: iso(this.options.clock.now()),
    });
    if (claimed && outcome === 'queued') this.waiting.add(key.job);
    return claimed;
  }

  /**
   * A scheduled slot under the overlap policy: skipped, queued, or claimed and started. `known`:
   * the job's open slot rows when the caller has them fresh, else they are read.
   */
  private async fire(job: Job, slot: number, detail: string | null = null, known?: Slot[]): Promise<void> {
    const key: Key = { job: job.name, kind: 'schedule', slot_at: iso(slot) };
    if (job.overlap !== 'allow') {
      const open = await this.openSlots(job.name, known);
      const running = open.find((s) => s.outcome !== 'queued');
      const waiting = open.find((s) => s.outcome === 'queued');
      if (running || waiting) {
        const busy = [
          running && `the run of ${running.slot_at}${running.run_id ? ` (${running.run_id})` : ''} was still running`,
          waiting && `the slot of ${waiting.slot_at} was already waiting`,
        ]
          .filter(Boolean)
          .join('; ');
        if (job.overlap === 'queue' && !waiting) await this.claim(key, 'queued', `waits: ${busy}`);
        else await this.claim(key, 'skipped_overlap', `overlap: ${job.overlap}; ${busy}`);
        return;
      }
    }
    if (await this.claim(key, 'claimed', detail))
      await this.startClaimed(job, key, detail === CATCH_UP ? 'catch_up' : 'due');
  }

  /**
   * The job's slots not done yet: being started, waiting, or whose run has not ended. A run is
   * asked of the engine (its record is shared by every master): one that ended, was cancelled or
   * was interrupted with a dead master is closed here, so no slot waits on a run that is gone.
   */
  private async openSlots(name: string, known?: Slot[]): Promise<Slot[]> {
    const open: Slot[] = [];
    for (const slot of known ?? (await this.options.jobs.openSlots(name))) {
      if (slot.outcome === 'started' && slot.run_id) {
        const run = await this.options.engine.get(slot.run_id, { log: false });
        if (!run || run.status !== 'running') {
          await this.options.jobs.update(slot, {
            run_status: run?.status ?? 'unknown',
            finished_at: run?.completedAt ?? iso(this.options.clock.now()),
          });
          continue;
        }
      }
      open.push(slot);
    }
    return open;
  }

  /** Starts the oldest waiting slot of each job (or of `only`) this master holds, once nothing of the job runs. */
  private async startQueued(only?: string): Promise<void> {
    for (const name of [...this.waiting]) {
      if (only !== undefined && name !== only) continue;
      const job = this.options.jobs.get(name);
      const open = job ? await this.options.jobs.openSlots(name) : [];
      const mine = open.filter((s) => s.outcome === 'queued' && s.master === this.options.masterId);
      const first = mine[0];
      if (!job || !first) {
        this.waiting.delete(name);
        continue;
      }
      if (!job.enabled) {
        // A disabled job starts nothing, not even what it queued before (a removed one lost its
        // slots with it). Closed at once, not when the run it waited for ends.
        for (const slot of mine)
          await this.options.jobs.update(slot, {
            outcome: 'skipped_overlap',
            finished_at: iso(this.options.clock.now()),
            detail: `${slot.detail ?? 'waited'}; not started: the job was disabled while the slot waited`,
          });
        this.waiting.delete(name);
        continue;
      }
      if ((await this.openSlots(job.name)).some((s) => s.outcome !== 'queued')) continue;
      await this.options.jobs.update(first, { outcome: 'claimed' });
      await this.startClaimed(job, first, first.detail === CATCH_UP ? 'catch_up' : 'queued');
    }
  }

  /** Starts a manual run now (run-now), whatever the overlap policy: a person asked for it. */
  async runNow(job: Job, by: string): Promise<Slot> {
    const now = this.options.clock.now();
    const key: Key = { job: job.name, kind: 'manual', slot_at: iso(now) };
    if (!(await this.claim(key, 'claimed', `run now by ${by}`)))
      throw new InvalidInputError(`job ${job.name} was just run now; try again in a moment`);
    await this.startClaimed(job, key);
    const { slots } = await this.options.jobs.history(job.name, 5, 0);
    return slots.find((s) => s.kind === 'manual' && s.slot_at === key.slot_at)!;
  }

  /**
   * The claimed slot's run: started through the flows service or the engine, recorded, its end
   * awaited in the background. `start`: how a scheduled slot came to start (a manual one has none).
   */
  private async startClaimed(job: Job, key: Key, start?: StartKind): Promise<void> {
    const { jobs, clock, holdAfterClaimMs, logger } = this.options;
    if (holdAfterClaimMs) {
      logger.info(`scheduler: claimed ${key.job} ${key.slot_at}; holding ${holdAfterClaimMs} ms (testing)`);
      await clock.sleep(holdAfterClaimMs, this.stop.signal);
    }
    let started: Awaited<ReturnType<Scheduler['startTarget']>>;
    try {
      started = await this.startTarget(job);
    } catch (error) {
      const detail = messageOf(error);
      await jobs.update(key, { outcome: 'failed_to_start', detail, finished_at: iso(clock.now()) });
      logger.warn(`scheduler: job ${job.name} slot ${key.slot_at} failed to start: ${detail}`);
      this.track(
        this.notify(job, key, { outcome: 'failed_to_start', run_id: null, status: 'failed_to_start', detail }),
      );
      return;
    }
    const now = clock.now();
    const at = iso(now);
    if (started.kind !== 'skipped' && start) this.options.lateness?.((now - Date.parse(key.slot_at)) / 1000, start);
    if (started.kind === 'skipped') {
      await jobs.update(key, { outcome: 'skipped_overlap', detail: `the flow's concurrency: ${started.detail}` });
      return;
    }
    if (started.kind === 'queued') {
      await jobs.update(key, {
        outcome: 'started',
        started_at: at,
        run_status: 'queued',
        finished_at: at,
        detail: `queued by the flow's concurrency (${started.detail})`,
      });
      return;
    }
    await jobs.update(key, { outcome: 'started', started_at: at, run_id: started.runId });
    this.track(started.done.then((record) => this.finished(job, key, record)));
  }

  private async startTarget(
    job: Job,
  ): Promise<
    | { kind: 'run'; runId: string; done: Promise<RunRecord> }
    | { kind: 'queued'; detail: string }
    | { kind: 'skipped'; detail: string }
  > {
    const user = `schedule:${job.name}`;
    // The job's stack overrides the flow's or file's `stack:`; absent, the engine takes theirs.
    const stack = job.stack === null ? {} : { stack: job.stack };
    if (job.flow) {
      if (!this.options.flows) throw new Error(`no flows plugin on this master: flow ${job.flow} cannot start`);
      const start = await this.options.flows.start(job.flow, {
        trigger: 'scheduler',
        user,
        vars: job.vars,
        varsFrom: 'fields',
        ...stack,
      });
      if (start.outcome === 'started') return { kind: 'run', runId: start.runId, done: start.done };
      if (start.outcome === 'queued') return { kind: 'queued', detail: start.queueId };
      return { kind: 'skipped', detail: start.reason };
    }
    const { runId, done } = await this.options.engine.start({
      source: { file: job.workflow!, within: this.options.workflowDirs },
      trigger: 'scheduler',
      user,
      vars: job.vars,
      ...stack,
      varsFrom: 'fields',
    });
    return { kind: 'run', runId, done };
  }

  private async finished(job: Job, key: Key, record: RunRecord): Promise<void> {
    await this.options.jobs.update(key, {
      run_status: record.status,
      finished_at: record.completedAt ?? iso(this.options.clock.now()),
    });
    this.wake(); // a waiting slot of this job may start now
    await this.notify(job, key, {
      outcome: 'started',
      run_id: record.id,
      status: record.status,
      detail: record.error ?? null,
    });
  }

  private async notify(
    job: Job,
    key: Key,
    what: { outcome: Slot['outcome']; run_id: string | null; status: string; detail: string | null },
  ): Promise<void> {
    // The job as it is now: notifications changed meanwhile apply.
    const current = this.options.jobs.get(job.name) ?? job;
    const failure = what.status !== 'succeeded';
    if (!wants(current.notify_on, failure)) return;
    // In the background (track): its retries never hold up the loop; a stop ends their waits.
    const notice = await this.options.notifier.send(
      current,
      { job: job.name, slot_at: key.slot_at, ...what, failure },
      this.stop.signal,
    );
    await this.options.jobs.update(key, { notice });
    this.options.logger.info(`scheduler: job ${job.name} slot ${key.slot_at} notified: ${notice}`);
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((error) => this.options.logger.warn(`scheduler: ${messageOf(error)}`));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  /** Resolves once every run start, run end and notification in flight has been recorded (tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * Slots a master claimed and never started (it died between the claim and the run, or while a
   * slot waited): they are not fired again (at most once is the promise); each is closed as
   * `failed_to_start`, unless the run did start and is found by its job.
   */
  async recover(): Promise<number> {
    const { jobs, clock } = this.options;
    const stranded = await jobs.stranded(this.options.isAlive);
    for (const slot of stranded)
      await jobs.update(slot, {
        outcome: 'failed_to_start',
        finished_at: iso(clock.now()),
        detail:
          slot.outcome === 'queued'
            ? `master ${slot.master} stopped while the slot waited; not fired again`
            : `master ${slot.master} stopped after claiming the slot, before its run was recorded; not fired again (a run it started shows in the executions of schedule:${slot.job})`,
      });
    return stranded.length;
  }
}

/** Runs the tasks, at most `width` at a time. */
async function inBatches(tasks: (() => Promise<void>)[], width: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
}
