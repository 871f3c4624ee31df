import { createServiceRef } from './service-ref.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * A scheduler job as another plugin declares it (GitOps' manifest): the fields of
 * `POST /api/v1/scheduler/jobs`. Exactly one of `flow` and `workflow`; omitted fields take the
 * scheduler's defaults (the master's zone, missed `skip`, overlap `skip`, enabled).
 */
export interface ScheduleDeclaration {
  name: string;
  description?: string;
  /** The saved flow it starts. */
  flow?: string;
  /** Or the workflow file (under engine.workflow_dirs) it starts. */
  workflow?: string;
  /** Five-field cron. */
  schedule: string;
  timezone?: string;
  missed?: string;
  overlap?: string;
  vars?: Record<string, string>;
  /** The stack its runs read, over the flow's or workflow's own `stack:`. */
  stack?: string;
  enabled?: boolean;
}

/**
 * The scheduler's jobs, for plugins that manage jobs of their own (GitOps). Errors are the API's:
 * an InvalidInputError whose `field` names the field at fault.
 */
export interface SchedulesService {
  /** What `put` would do with the declaration, writing nothing (a diff before a sync). */
  compare(job: ScheduleDeclaration): 'created' | 'updated' | 'unchanged';
  /**
   * Rejects with what `put` would refuse the declaration for (fields, schedule, time zone, the
   * workflow file validating), writing nothing; whether its flow exists is the caller's to check
   * (a sync creates flows in the same unit as the jobs that start them).
   */
  check(job: ScheduleDeclaration): Promise<void>;
  /**
   * Creates the job or replaces the one of that name (its history kept); `unchanged` when equal.
   * Given a `unit` (UnitOfWork), it is written in the unit's transaction and scheduled from the
   * unit's commit on; inside a unit neither its flow nor its workflow file is checked (call
   * `check`, and see that the flow exists, before the unit opens).
   */
  put(job: ScheduleDeclaration, unit?: UnitOfWork): Promise<'created' | 'updated' | 'unchanged'>;
  /** Deletes the job and its history; false when there was none. Given a `unit`, in its transaction. */
  remove(name: string, unit?: UnitOfWork): Promise<boolean>;
}

export const SchedulesRef = createServiceRef<SchedulesService>({
  id: 'scheduler.jobs',
  description: 'cron jobs starting flows: create, replace and delete them by name (scheduler plugin)',
});
