import { AGENT_NAME_RULE } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { MAX_DESCRIPTION, MAX_MISSED_CAP, MISSED_POLICIES, NOTIFY_ON, OVERLAP_POLICIES } from './job-store.js';

/** Request and response schemas of /api/v1/scheduler/jobs (the store checks values and names the field). */
const literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description },
  );
const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const MISSED =
  'after downtime: skip (default: record them missed), run_once (the latest), run_all (up to missed_cap, one after another)';
const OVERLAP = 'when the previous run is still running: skip (default), queue (one waits), allow';
const NOTIFY = 'when to notify through notify_webhook and notify_email: never (default), failure, success, both';

const Fields = {
  description: Type.String({ maxLength: MAX_DESCRIPTION, description: 'free text for people' }),
  flow: Nullable('the saved flow the job starts (or give workflow)'),
  workflow: Nullable('the workflow file the job starts, under engine.workflow_dirs (or give flow)'),
  schedule: Type.String({
    minLength: 1,
    description: 'five-field cron expression: minute hour day-of-month month day-of-week',
  }),
  timezone: Type.String({
    minLength: 1,
    description: "IANA time zone the schedule is read in (default: the master's)",
  }),
  missed: literals(MISSED_POLICIES, MISSED),
  missed_cap: Type.Integer({
    minimum: 1,
    maximum: MAX_MISSED_CAP,
    description: 'most missed slots run_all starts (default 10)',
  }),
  overlap: literals(OVERLAP_POLICIES, OVERLAP),
  vars: Type.Record(Type.String(), Type.String(), { description: 'vars passed to every run, as --var k=v' }),
  stack: Nullable(
    "the stack every run reads, over the flow's or workflow's own stack: (null: theirs); refused when no such stack exists",
  ),
  enabled: Type.Boolean({ description: 'a disabled job keeps its history and fires nothing' }),
  notify_on: literals(NOTIFY_ON, NOTIFY),
  notify_webhook: Nullable('http(s) URL a JSON notice is POSTed to'),
  notify_email: Type.Array(Type.String(), {
    maxItems: 20,
    description: 'addresses e-mailed through scheduler.smtp_url',
  }),
};

export const SlotSchema = Type.Object({
  job: Type.String(),
  kind: literals(['schedule', 'manual'] as const, 'schedule, or manual (run now)'),
  slot_at: Type.String({ description: 'ISO 8601 UTC: the time the schedule gave' }),
  outcome: literals(
    ['claimed', 'queued', 'started', 'skipped_overlap', 'missed', 'failed_to_start'] as const,
    'started, skipped_overlap, missed, failed_to_start; claimed and queued while it is being started or waits',
  ),
  master: Type.String({ description: 'the master that claimed the slot' }),
  claimed_at: Type.String(),
  started_at: Nullable('when the run started'),
  run_id: Nullable('the run started'),
  run_status: Nullable("the run's final status, null while it runs"),
  finished_at: Nullable('when the run ended'),
  detail: Nullable('why (the overlap, the policy, the error)'),
  notice: Nullable('what the notifications came to'),
});

export const JobSchema = Type.Object({
  name: Type.String(),
  ...Fields,
  active_since: Type.String({ description: 'ISO 8601: slots before it are not the job’s' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  next_runs: Type.Array(Type.String(), { description: 'the next 5 slots, ISO 8601 UTC (none when disabled)' }),
  last: Type.Union([SlotSchema, Type.Null()], { description: 'the latest slot' }),
});

export const JobListSchema = Type.Object({ jobs: Type.Array(JobSchema), total: Type.Integer() });
export const HistorySchema = Type.Object({ slots: Type.Array(SlotSchema), total: Type.Integer() });

export const JobParams = Type.Object({ name: Type.String({ minLength: 1, description: 'the job name' }) });

export const HistoryQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

const optional = Type.Partial(Type.Object(Fields)).properties;

export const CreateJobBody = Type.Object(
  {
    name: Type.String({ minLength: 1, description: `job name: ${AGENT_NAME_RULE}` }),
    ...optional,
    schedule: Fields.schedule,
  },
  { additionalProperties: false },
);

export const UpdateJobBody = Type.Object(optional, { additionalProperties: false });
