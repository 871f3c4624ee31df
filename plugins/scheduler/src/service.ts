import {
  checkStackField,
  InvalidInputError,
  type UnitOfWork,
  type FlowsService,
  type ScheduleDeclaration,
  type SchedulesService,
  type Stacks,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import { mergeJob, newJob, type Job, type JobInput, type JobStore, type Slot } from './job-store.js';
import type { Scheduler } from './scheduler.js';

/** A job as the API answers it: its fields, its next 5 runs and its latest slot. */
export type JobAnswer = Job & { next_runs: string[]; last: Slot | null };

/**
 * What the routes call: jobs checked (the flow exists, the workflow file validates under the
 * workflow directories) and stored, and the loop told of each change.
 */
export class SchedulerService {
  constructor(
    private readonly jobs: JobStore,
    private readonly scheduler: Scheduler,
    private readonly deps: {
      engine: WorkflowEngine;
      flows?: FlowsService;
      /** Says whether a job's stack exists (the stacks plugin), when it is loaded. */
      stacks?: Pick<Stacks, 'check'>;
      workflowDirs: string[];
      defaultTimezone: string;
      now: () => Date;
      /** Told after each change is durable (other masters read the job again). */
      changed: (name: string) => void;
    },
  ) {}

  async list(): Promise<{ jobs: JobAnswer[]; total: number }> {
    const latest = await this.jobs.latest();
    const jobs = this.jobs.list().map((job) => this.answer(job, latest.get(job.name) ?? null));
    return { jobs, total: jobs.length };
  }

  async get(name: string): Promise<JobAnswer> {
    const job = this.jobs.require(name);
    const { slots } = await this.jobs.history(name, 1, 0);
    return this.answer(job, slots[0] ?? null);
  }

  async create(input: JobInput & { name: string }): Promise<JobAnswer> {
    const job = mergeJob(newJob(input.name, this.deps.defaultTimezone, this.deps.now()), input);
    await this.checkTarget(job);
    await checkStackField(this.deps.stacks, job.stack);
    await this.jobs.insert(job);
    return this.after(job.name);
  }

  async update(name: string, input: JobInput): Promise<JobAnswer> {
    const current = this.jobs.require(name);
    const job = this.updated(current, input);
    if (input.flow !== undefined || input.workflow !== undefined) await this.checkTarget(job);
    if (job.stack !== current.stack) await checkStackField(this.deps.stacks, job.stack);
    await this.jobs.replace(job);
    return this.after(name);
  }

  /** The job `input` makes of `current`, checked; a new schedule counts from now. */
  private updated(current: Job, input: JobInput): Job {
    const job = mergeJob({ ...current, updated_at: this.deps.now().toISOString() }, { ...input, name: current.name });
    // Slots the old schedule gave are not missed ones of the new.
    if (job.schedule !== current.schedule || job.timezone !== current.timezone || (job.enabled && !current.enabled))
      job.active_since = job.updated_at;
    return job;
  }

  setEnabled(name: string, enabled: boolean): Promise<JobAnswer> {
    return this.update(name, { enabled });
  }

  async remove(name: string): Promise<void> {
    this.jobs.require(name);
    await this.jobs.delete(name);
    this.tell(name);
  }

  runNow(name: string, by: string): Promise<Slot> {
    return this.scheduler.runNow(this.jobs.require(name), by);
  }

  history(name: string, limit: number, offset: number): Promise<{ slots: Slot[]; total: number }> {
    this.jobs.require(name);
    return this.jobs.history(name, limit, offset);
  }

  /** SchedulesService for other plugins (GitOps' manifest): jobs by name, written whole. */
  asService(): SchedulesService {
    return {
      compare: (declaration) => this.compare(declaration).change,
      check: async (declaration) => {
        const job = this.declared(declaration);
        // Its flow may come in the same sync as the job: whether it exists is the caller's check.
        if (job.workflow) await this.checkTarget(job);
        await checkStackField(this.deps.stacks, job.stack);
      },
      put: async (declaration, unit) => {
        const job = this.declared(declaration);
        // Inside a unit the flows and stacks services must not read the store the unit holds: `check` did.
        if (!unit) {
          await this.checkTarget(job);
          await checkStackField(this.deps.stacks, job.stack);
        }
        return this.jobs.inUnit(unit, (joined) => this.putIn(joined, job));
      },
      remove: (name, unit) =>
        this.jobs.inUnit(unit, async (joined) => {
          const removed = await this.jobs.delete(name, joined);
          if (removed) joined.afterCommit(() => this.tell(name));
          return removed;
        }),
    };
  }

  /** A declared job written whole, compared with the job as the unit sees it. */
  private async putIn(unit: UnitOfWork, declared: Job): Promise<'created' | 'updated' | 'unchanged'> {
    const current = await this.jobs.read(unit.tx, declared.name);
    if (current && sameFields(declared, current)) return 'unchanged';
    if (current) await this.jobs.replace(this.updated(current, declaredFields(declared)), unit);
    else await this.jobs.insert(declared, unit);
    unit.afterCommit(() => this.tell(declared.name));
    return current ? 'updated' : 'created';
  }

  private compare(declaration: ScheduleDeclaration) {
    const declared = this.declared(declaration);
    const current = this.jobs.get(declaration.name);
    if (!current) return { change: 'created' as const };
    return { change: sameFields(declared, current) ? ('unchanged' as const) : ('updated' as const) };
  }

  /** The job a declaration describes, omitted fields at their defaults, checked as a create is. */
  private declared(declaration: ScheduleDeclaration): Job {
    return mergeJob(newJob(declaration.name, this.deps.defaultTimezone, this.deps.now()), {
      ...declaration,
      flow: declaration.flow ?? null,
      workflow: declaration.workflow ?? null,
      stack: declaration.stack ?? null,
    });
  }

  private async after(name: string): Promise<JobAnswer> {
    this.tell(name);
    return this.get(name);
  }

  /** After a change committed: the loop plans the job again and the other masters read it again. */
  private tell(name: string): void {
    this.scheduler.forget(name);
    this.deps.changed(name);
  }

  private answer(job: Job, last: Slot | null): JobAnswer {
    return { ...job, next_runs: this.scheduler.nextRuns(job), last };
  }

  /** Refuses a job whose flow does not exist or whose workflow file does not validate, at save. */
  private async checkTarget(job: Job): Promise<void> {
    if (job.flow) {
      if (!this.deps.flows)
        throw new InvalidInputError('flow: no flows plugin runs on this master; give a workflow file', {
          field: 'flow',
        });
      if (!(await this.deps.flows.get(job.flow)))
        throw new InvalidInputError(`flow: there is no saved flow named "${job.flow}"`, { field: 'flow' });
      return;
    }
    try {
      await this.deps.engine.validate({ source: { file: job.workflow!, within: this.deps.workflowDirs } });
    } catch (error) {
      const message = (error as Error).message;
      throw new InvalidInputError(`workflow: ${message}`, { field: 'workflow', details: { cause: message } });
    }
  }
}

const sameFields = (a: Job, b: Job) => JSON.stringify(declaredFields(a)) === JSON.stringify(declaredFields(b));

/** The fields a declaration sets (every one, so that a field dropped from it returns to its default). */
function declaredFields(job: Job): JobInput {
  const { description, flow, workflow, schedule, timezone, missed, missed_cap, overlap, vars, stack, enabled } = job;
  return { description, flow, workflow, schedule, timezone, missed, missed_cap, overlap, vars, stack, enabled };
}
