import { Type } from '@runner/plugin-sdk/schema';

/**
 * Request and response schemas of the engine's routes (api-shape.ts shapes the answers). The
 * router validates requests with them and serves them in the OpenAPI document.
 */
/** A union of string literals whose static type is the union of the strings. */
function literals<T extends string>(values: readonly T[], options: { description?: string } = {}) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}

const RunStatus = literals(['running', 'succeeded', 'failed', 'cancelled', 'interrupted'], {
  description: 'run status',
});
const TaskStatus = literals(['pending', 'running', 'succeeded', 'failed', 'cancelled', 'skipped', 'ignored']);
const Trigger = literals(['cli', 'api', 'scheduler', 'hook', 'flow']);

export const RunBody = Type.Object(
  {
    file: Type.Optional(Type.String({ minLength: 1, description: 'a workflow file on the master' })),
    content: Type.Optional(Type.String({ minLength: 1, description: 'the workflow YAML itself' })),
    workflow_name: Type.Optional(Type.String({ minLength: 1 })),
    content_label: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'with content: the file it came from, named in its problems (file:line:column); default workflow_name',
      }),
    ),
    delegate_to: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'agents to run every task on' }),
    ),
    forks: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "delegated units that may run at once across the run (overrides the workflow's forks; default 10)",
      }),
    ),
    values: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
    vars: Type.Optional(Type.Record(Type.String(), Type.String())),
    dry_run: Type.Optional(Type.Boolean()),
    group: Type.Optional(Type.String({ minLength: 1 })),
    verbose: Type.Optional(Type.Boolean()),
    stack: Type.Optional(
      Type.String({
        minLength: 1,
        description: "the stack (environment) whose variables and secrets the run reads; default the workflow's stack:",
      }),
    ),
    confirm: Type.Optional(
      Type.Boolean({ description: 'true: the caller confirmed a run that asks for it (a production stack)' }),
    ),
    // Only what a client may start runs as; the scheduler, hooks and flows start theirs in-process.
    trigger: Type.Optional(
      literals(['api', 'cli'], { description: 'what started the run: `cli` for `runner run` (default `api`)' }),
    ),
  },
  { additionalProperties: false, description: 'exactly one of file and content' },
);

export const RunAccepted = Type.Object({
  id: Type.String(),
  status: RunStatus,
  workflow_name: Type.Optional(Type.String()),
});

const Problem = Type.Object({
  message: Type.String(),
  line: Type.Optional(Type.Integer({ description: '1-based line of the workflow text' })),
  column: Type.Optional(Type.Integer({ description: '1-based column' })),
  path: Type.Optional(Type.String({ description: 'where in the document (`tasks[1].retry`), or the request field' })),
});

export const ValidateResult = Type.Object({
  valid: Type.Boolean(),
  workflow_name: Type.Optional(Type.String({ description: 'the name the run would be recorded under' })),
  tasks: Type.Optional(Type.Array(Type.String(), { description: 'the tasks that would run, in order' })),
  problems: Type.Array(Problem, { description: 'what stops the workflow from running; empty when valid' }),
  warnings: Type.Array(Problem),
});

export const ExecutionsQuery = Type.Object(
  {
    workflow: Type.Optional(Type.String({ description: 'workflow name' })),
    status: Type.Optional(RunStatus),
    trigger: Type.Optional(Trigger),
    user: Type.Optional(Type.String({ minLength: 1, description: 'who started the run' })),
    agent: Type.Optional(Type.String({ minLength: 1, description: 'runs with a unit on this agent' })),
    stack: Type.Optional(Type.String({ minLength: 1, description: 'runs of this stack' })),
    since: Type.Optional(Type.String({ description: 'ISO 8601 or Unix seconds: runs started at or after' })),
    limit: Type.Integer({ minimum: 0, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

const LogLine = Type.Object({
  timestamp: Type.String(),
  level: literals(['debug', 'info', 'warn', 'error']),
  message: Type.String(),
  fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const Task = Type.Object({
  name: Type.String(),
  task: Type.String(),
  item: Type.Optional(Type.Unknown()),
  agent: Type.String(),
  status: TaskStatus,
  attempts: Type.Integer(),
  started_at: Type.Optional(Type.String()),
  completed_at: Type.Optional(Type.String()),
  duration: Type.Number({ description: 'seconds' }),
  message: Type.Optional(Type.String()),
  outputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  log: Type.Optional(Type.Array(LogLine)),
  log_truncated: Type.Boolean(),
});

export const RunSchema = Type.Object({
  id: Type.String(),
  workflow_name: Type.String(),
  status: RunStatus,
  dry_run: Type.Boolean(),
  started_at: Type.String(),
  completed_at: Type.Optional(Type.String()),
  duration: Type.Number({ description: 'seconds' }),
  error: Type.Optional(Type.String()),
  trigger: Type.Optional(Trigger),
  user: Type.Optional(Type.String({ description: 'who started the run' })),
  cancelled_by: Type.Optional(Type.String({ description: 'who cancelled the run' })),
  rerun_of: Type.Optional(Type.String({ description: 'the run this one ran again (Run again)' })),
  stack: Type.Optional(Type.String({ description: 'the stack (environment) the run used' })),
  counts: Type.Record(Type.String(), Type.Integer()),
  tasks: Type.Optional(Type.Array(Task)),
});

export const ExecutionList = Type.Object({
  executions: Type.Array(RunSchema),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const ExecutionQuery = Type.Object(
  {
    log: Type.Optional(
      Type.Boolean({
        description:
          "include each task's log (default true); the run view reads them in pages from /executions/:id/log",
      }),
    ),
  },
  { additionalProperties: false },
);

/** A log filter's least level: lines at it and above (`warn`: warnings and errors). */
export const LogLevel = literals(['debug', 'info', 'warn', 'error'], {
  description: 'only lines at this level and above',
});

export const RunLogQuery = Type.Object(
  {
    tail: Type.Integer({ minimum: 1, maximum: 5000, default: 500, description: 'lines to answer: the last ones' }),
    before: Type.Optional(
      Type.Integer({ minimum: 0, description: "only lines before this position (a page's `older` cursor)" }),
    ),
    task: Type.Optional(Type.String({ minLength: 1, description: 'only lines of this task' })),
    agent: Type.Optional(Type.String({ minLength: 1, description: 'only lines of units on this agent' })),
    q: Type.Optional(Type.String({ minLength: 1, description: 'only lines containing this text (any case)' })),
    level: Type.Optional(LogLevel),
    format: Type.Optional(
      literals(['json', 'text'], {
        description: '`text`: the whole (filtered) log as a text download instead of a page',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RunLogPage = Type.Object({
  lines: Type.Array(
    Type.Object({
      n: Type.Integer({ description: "the line's position in the run's log" }),
      task: Type.String(),
      agent: Type.String(),
      timestamp: Type.String(),
      level: literals(['debug', 'info', 'warn', 'error']),
      message: Type.String(),
      fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
  total: Type.Integer({ description: "lines in the run's log" }),
  matched: Type.Integer({ description: 'lines matching the filters' }),
  older: Type.Optional(Type.Integer({ description: '`before` for the previous page; absent on the first page' })),
  tasks: Type.Array(Type.String(), { description: 'task names of the run' }),
  agents: Type.Array(Type.String(), { description: 'agents of the run' }),
});

export const ExecutionParams = Type.Object({ id: Type.String({ minLength: 1, description: 'the run id' }) });

/** What a run was started with, as the run page shows it (GET /executions/:id/inputs). */
export const RunInputs = Type.Object({
  recorded: Type.Boolean({ description: 'false: the inputs were not kept (see reason)' }),
  reason: Type.Optional(Type.String({ description: 'why the inputs were not kept' })),
  inputs: Type.Optional(
    Type.Object({
      file: Type.Optional(Type.String({ description: 'the workflow file on the master' })),
      content: Type.Optional(Type.String({ description: 'the workflow text the run was started with' })),
      source: Type.Optional(Type.String({ description: 'a registered source: its kind, reference and version' })),
      workflow_name: Type.Optional(Type.String()),
      group: Type.Optional(Type.String()),
      delegate_to: Type.Optional(Type.Array(Type.String())),
      forks: Type.Optional(Type.Integer()),
      stack: Type.Optional(Type.String()),
      vars: Type.Optional(Type.Record(Type.String(), Type.String())),
      values: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
      dry_run: Type.Boolean(),
      verbose: Type.Boolean(),
    }),
  ),
});

/** The runs-over-time chart: a bucket per hour or day since a time, counts by status. */
export const HistogramQuery = Type.Object(
  {
    since: Type.String({ description: 'ISO 8601 or Unix seconds: runs started at or after' }),
    bucket: literals(['hour', 'day'], { description: 'the width of a bucket (UTC)' }),
    workflow: Type.Optional(Type.String({ description: 'workflow name' })),
    trigger: Type.Optional(Trigger),
    user: Type.Optional(Type.String({ minLength: 1 })),
    agent: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const Histogram = Type.Object({
  buckets: Type.Array(
    Type.Object({
      start: Type.String({ description: 'ISO 8601: where the bucket begins (UTC)' }),
      counts: Type.Record(Type.String(), Type.Integer(), { description: 'runs started in it, by status' }),
    }),
    { description: 'buckets with at least one run, oldest first' },
  ),
});
