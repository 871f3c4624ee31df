// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import {
  RunBody,
  RunAccepted,
  ValidateResult,
  ExecutionParams,
  ExecutionsQuery,
  ExecutionList,
  ExecutionQuery,
  RunSchema,
  RunLogQuery,
  RunLogPage,
  RunInputs,
  LogLevel,
  HistogramQuery,
  Histogram,
} from './api-schemas.js';

const LogStreamQuery = Type.Object(
  {
    task: Type.Optional(Type.String({ minLength: 1, description: 'only lines of this task' })),
    agent: Type.Optional(Type.String({ minLength: 1, description: 'only lines of units on this agent' })),
    q: Type.Optional(Type.String({ minLength: 1, description: 'only lines containing this text (any case)' })),
    level: Type.Optional(LogLevel),
  },
  { additionalProperties: false },
);

export const postWorkflowsRun = declareRoute({
  method: 'POST',
  path: '/workflows/run',
  summary: 'start a run of a workflow file on the master or of workflow text',
  tags: ['workflows'],
  permission: Permissions.workflowExecute,
  body: RunBody,
  responses: { 202: RunAccepted },
});

export const postWorkflowsValidate = declareRoute({
  method: 'POST',
  path: '/workflows/validate',
  summary: 'check a workflow as /workflows/run would, without running or recording anything',
  description:
    'Takes the body of `POST /workflows/run` and runs every check made before a run starts (parse, schema, scripts compiled, template variables, the group, the agents named). Answers `valid: false` with each problem at its line and column; a request the run route would refuse for other reasons (a file outside `engine.workflow_dirs`, a bad field) gets the same error.',
  tags: ['workflows'],
  // Checking changes nothing: whoever may see workflows may check one.
  permission: Permissions.workflowView,
  body: RunBody,
  responses: { 200: ValidateResult },
});

export const postExecutionsIdRerun = declareRoute({
  method: 'POST',
  path: '/executions/:id/rerun',
  summary: 'start a run again: the same workflow with the same inputs',
  description:
    'Starts a new run with what the run was started with: a workflow file on the master is read again (as it is now, and only under `engine.workflow_dirs`), workflow text is sent again as it was; vars, values, group, delegate_to, forks, dry_run and verbose are the same. The new run records the caller, trigger `api` and `rerun_of`.',
  tags: ['executions'],
  permission: Permissions.workflowExecute,
  params: ExecutionParams,
  responses: { 202: RunAccepted },
});

export const getExecutions = declareRoute({
  method: 'GET',
  path: '/executions',
  summary: 'runs, newest first, with filters and paging',
  tags: ['executions'],
  permission: Permissions.workflowView,
  query: ExecutionsQuery,
  responses: { 200: ExecutionList },
});

export const getExecutionsHistogram = declareRoute({
  method: 'GET',
  path: '/executions/histogram',
  summary: 'runs over time: how many started per hour or day, by status',
  tags: ['executions'],
  permission: Permissions.workflowView,
  query: HistogramQuery,
  responses: { 200: Histogram },
});

export const getExecutionsId = declareRoute({
  method: 'GET',
  path: '/executions/:id',
  summary: 'one run with its tasks and their logs',
  tags: ['executions'],
  permission: Permissions.workflowView,
  params: ExecutionParams,
  query: ExecutionQuery,
  responses: { 200: RunSchema },
});

export const getExecutionsIdInputs = declareRoute({
  method: 'GET',
  path: '/executions/:id/inputs',
  summary: 'what a run was started with: the workflow (file or text), vars, values, group, delegate_to',
  description:
    'The inputs kept to run it again (`POST /executions/:id/rerun`). `recorded: false` with a reason for a run whose inputs held a secret (never stored) or that was recorded before runs kept them. Secrets are masked.',
  tags: ['executions'],
  permission: Permissions.workflowView,
  params: ExecutionParams,
  responses: { 200: RunInputs },
});

export const getExecutionsIdLog = declareRoute({
  method: 'GET',
  path: '/executions/:id/log',
  summary: "a run's log in pages from the tail, or the whole log as a text download",
  description:
    "The run's lines (units in the run's order, each unit's lines in order) are numbered from 0: a page holds the last `tail` lines before `before` that match `task`, `agent` and `q`, and `older` is the `before` of the page above it. Positions of an ended run never change; a client following a running run reads the tail again. `format=text` answers every matching line as `text/plain` with a file name to save it under. Secrets are masked.",
  tags: ['executions'],
  permission: Permissions.workflowView,
  params: ExecutionParams,
  query: RunLogQuery,
  responses: {
    200: {
      description: 'a page of lines (JSON), or with format=text the whole log',
      schema: RunLogPage,
    },
  },
});

export const postExecutionsIdCancel = declareRoute({
  method: 'POST',
  path: '/executions/:id/cancel',
  summary: 'cancel a running run: its tasks are stopped and it ends cancelled',
  description:
    'Running tasks are stopped (their processes killed by process group, delegated tasks cancelled on their agents), the rest are skipped, and the run ends `cancelled` with `cancelled_by`. Answers once the run has ended, with its record; a run that had already ended is returned as it is.',
  tags: ['executions'],
  // The role table's own permission for this (granted to every role that may execute).
  permission: Permissions.workflowCancel,
  params: ExecutionParams,
  responses: { 200: RunSchema },
});

export const getExecutionsIdLogStream = declareRoute({
  method: 'GET',
  path: '/executions/:id/log/stream',
  summary: "a running run's log lines as they are written, as server-sent events",
  description:
    'Events: `ready` `{written}` (lines the log held when following began), then `lines` `[{seq, task, agent, timestamp, level, message, fields?}]` batched over 100 ms, filtered by `task`, `agent` and `q` like the pages of `/executions/:id/log`, then `end` `{status}` when the run ends. `seq` counts every line of the run in the order they were written: a page read after `ready` already holds the lines whose `seq` is below its `total`. Secrets are masked.',
  tags: ['executions'],
  permission: Permissions.workflowView,
  streaming: true,
  params: ExecutionParams,
  query: LogStreamQuery,
  responses: {
    200: { description: '`ready`, `lines` and `end` events', contentType: 'text/event-stream' },
  },
});

/** Every route above, for the plugin's definition. */
export const routes = [
  postWorkflowsRun,
  postWorkflowsValidate,
  postExecutionsIdRerun,
  getExecutions,
  // Before /executions/:id, which would take `histogram` for an id.
  getExecutionsHistogram,
  getExecutionsId,
  getExecutionsIdInputs,
  getExecutionsIdLog,
  postExecutionsIdCancel,
  getExecutionsIdLogStream,
];
