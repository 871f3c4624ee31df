import type { LuaValue } from './lua-module.js';
import type { LuaRunOptions, LuaRunResult } from './lua-runtime.js';
import { createServiceRef } from './service-ref.js';
import type { VarsFrom, WorkflowProblem } from './workflow.js';

/**
 * Where a workflow comes from: a file on the machine running it, its text, or a source another
 * plugin registered with `WorkflowEngine.registerSource` (a saved flow by name and version).
 */
export type WorkflowSource =
  | {
      file: string;
      /**
       * Only read the file if it lies (after resolving symlinks) under one of these directories:
       * the API sets `engine.workflow_dirs`; the CLI's own files have none.
       */
      within?: string[];
    }
  | {
      content: string;
      name?: string;
      /** What problems are reported at (the file the text came from); default `name`. */ label?: string;
    }
  | { kind: string; ref: string; version?: number };

/** What a registered source resolves to. `path` is shown in file:line:column errors. */
export interface ResolvedSource {
  content: string;
  name: string;
  path?: string;
}

/** What started a run; recorded with it. */
export type RunTrigger = 'cli' | 'api' | 'scheduler' | 'hook' | 'flow';

/** What starts a run (`runner run`, `POST /api/v1/workflows/run`, the scheduler, a flow). */
export interface RunRequest {
  source: WorkflowSource;
  /** Name recorded for the run; default: the file's base name without extension. */
  workflowName?: string;
  /** Run only this group's tasks and what they depend on. */
  group?: string;
  /** `--var k=v` overrides, merged over the file's `vars`. */
  vars?: Record<string, string>;
  /** Where `vars` were given: errors name a var as the caller wrote it (default: `--var`). */
  varsFrom?: VarsFrom;
  /** `--values FILE` contents, merged over the file's `values` per agent. */
  values?: Record<string, Record<string, unknown>>;
  /** Delegate every task of the run to these agents (`runner run --delegate-to`). */
  delegateTo?: string[];
  /** Delegated units that may run at once (`runner run --forks`); overrides the workflow's `forks`. */
  forks?: number;
  dryRun?: boolean;
  /** Task log lines at debug level reach observers too. */
  verbose?: boolean;
  /** What started the run (default `api`). */
  trigger?: RunTrigger;
  /** Who started it: a user name, a token name, or the scheduler job / hook / flow that did. */
  user?: string;
  /** The run this one runs again ("Run again"): recorded with it. */
  rerunOf?: string;
  /**
   * The stack (environment) the run uses (`runner run --stack prod`, `stack` in API bodies); absent:
   * the workflow's `stack:`, if any. Recorded with the run; its inputs come from the run-input
   * contributors (`WorkflowEngine.registerRunInputs`).
   */
  stack?: string;
  /** The person starting it confirmed a run that asks for it (a `production` stack): `--yes`, `"confirm": true`. */
  confirm?: boolean;
}

/**
 * What a run-input contributor adds to a run before the engine merges its variables. Values of
 * `secrets` are registered with the redactor from before the first task until the run's record is
 * final, so every sink masks them; the engine never stores them.
 */
export interface RunInputs {
  /**
   * Values for the workflow's declared `vars:`: they override the file's values and are
   * overridden by the request's own `vars` (`--var`). Names the workflow does not declare are
   * ignored here (a contributor offers them under its own global).
   */
  vars?: Record<string, string>;
  /** Script and template globals the run gets (names from SCRIPT_GLOBALS: `stack`, `secrets`). */
  globals?: Record<string, Record<string, unknown>>;
  /**
   * Keys each added global holds: a script or template of the run that reads `<global>.<key>`
   * (written out, as `secrets.db_password`) of any other key is refused before the run starts,
   * naming the key and the global's owner (`what`), so an unknown name is never read as nil or ''.
   */
  strict?: Record<string, { keys: readonly string[]; what: string }>;
  /** Plaintext values to mask in every output of the process while the run lives. */
  secrets?: readonly string[];
}

/** What a contributor is asked with. */
export interface RunInputsContext {
  /** The request, its `stack` already defaulted from the workflow's `stack:`. */
  request: RunRequest;
  workflowName: string;
}

/**
 * A plugin that contributes a run's inputs (the stacks plugin: a stack's variables and secrets).
 * The engine asks every contributor whose `wants` holds, in the order registered, after the
 * workflow is parsed and before its vars are merged (before `beforeRun`, which sees the merged
 * run), for `start` and `validate` alike. A contributor refuses a run by throwing a RunnerError
 * (an inactive stack, a production run not confirmed): nothing is recorded and the caller gets the
 * error. Runs no contributor wants cost one `wants` call per contributor and nothing else.
 */
export interface RunInputsContributor {
  name: string;
  /** Synchronous and cheap (no I/O): whether this request concerns the contributor (it names a stack). */
  wants(request: RunRequest): boolean;
  contribute(context: RunInputsContext): Promise<RunInputs>;
}

/**
 * `cancelled`: stopped on request (`cancel`). `interrupted`: the process running it died or
 * stopped before it ended; set when the master starts again (issue: runs that survive crashes).
 */
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted';
/** `cancelled`: the unit was running when its run was cancelled (or the master stopped). */
export type TaskStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'skipped' | 'ignored';

/** One log line of a task, as the run records it. */
export interface TaskLogLine {
  /** ISO 8601. */
  timestamp: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

/** The outcome of one execution unit: a task, or one loop item or agent of it. */
export interface TaskResult {
  /** `build`, `per-host[web-1]`, `ship@web-2`. */
  name: string;
  /** The task's name in the file. */
  task: string;
  item?: LuaValue;
  agent: string;
  status: TaskStatus;
  attempts: number;
  /** ISO 8601; absent until it started. */
  startedAt?: string;
  completedAt?: string;
  /** Seconds. */
  duration: number;
  /** The script's message (second return value), the error, or why it was skipped. */
  message?: string;
  outputs?: Record<string, LuaValue>;
  log: TaskLogLine[];
  /** True when the log was cut at the size cap (a note is the last line). */
  logTruncated: boolean;
}

export interface RunRecord {
  id: string;
  workflowName: string;
  status: RunStatus;
  dryRun: boolean;
  /** ISO 8601. */
  startedAt: string;
  completedAt?: string;
  /** Seconds. */
  duration: number;
  error?: string;
  trigger?: RunTrigger;
  /** Who started the run. */
  user?: string;
  /** Who cancelled it, when it was cancelled. */
  cancelledBy?: string;
  /** The run this one ran again, when it was started with "Run again". */
  rerunOf?: string;
  /** The stack the run used. */
  stack?: string;
  /** Counts by status. */
  counts: Partial<Record<TaskStatus, number>>;
  tasks: TaskResult[];
}

/** Live progress of a run, for terminals and WebSocket clients. */
export type RunProgress =
  | { kind: 'run'; run: Omit<RunRecord, 'tasks'> }
  | { kind: 'task'; runId: string; task: Omit<TaskResult, 'log'> }
  | { kind: 'log'; runId: string; task: string; line: TaskLogLine };

/**
 * What a follower of a running run's log hears: each line as a unit keeps it, numbered in the
 * order lines were written (`seq`, from 0 over the whole run), then the run's end.
 */
export type LogFollowerEvent =
  { kind: 'line'; seq: number; task: string; agent: string; line: TaskLogLine } | { kind: 'end'; status: RunStatus };
export type LogFollower = (event: LogFollowerEvent) => void;

export interface ExecutionFilter {
  workflow?: string;
  status?: RunStatus;
  trigger?: RunTrigger;
  /** Who started the run. */
  user?: string;
  /** Runs with a unit on this agent. */
  agent?: string;
  /** Runs of this stack. */
  stack?: string;
  /** ISO 8601 or Unix seconds: runs started at or after. */
  since?: string;
  limit?: number;
  offset?: number;
}

/** A before-tap's answer: nothing to let the run or task go on, `{ refuse }` to stop it with a reason that is recorded. */
export type Refusal = { refuse: string } | void | undefined;

/** What run taps see. */
export interface RunTapContext {
  runId: string;
  workflowName: string;
  request: RunRequest;
}

/** What task taps see. */
export interface TaskTapContext {
  runId: string;
  workflowName: string;
  /** The task's name in the file. */
  task: string;
  /** This unit's display name (`per-host[web-1]`, `ship@web-2`). */
  unit: string;
  /** Agent name, or `localhost`. */
  agent: string;
  attempt: number;
  dryRun: boolean;
}

/** One tap point; `tap` returns a function that removes the tap. Taps run in the order added. */
export interface RunTapPoint<A extends unknown[], R = void> {
  tap(name: string, fn: (...args: A) => R | Promise<R>): () => void;
}

/**
 * The run lifecycle's tap points, tapped by plugins (flows, schedules, event hooks, audit, policy);
 * called run taps so that "hooks" stays the name of the feature that starts workflows on events.
 * A before-tap that refuses ends the run (or fails the task) with the reason recorded; a tap that
 * throws is treated as a refusal naming the tap. After-taps see the final records; their failures
 * are logged only. Points with no taps cost nothing on the run path. Each point's contract is in
 * the engine's README.
 */
export interface RunTaps {
  /** Before any task, the run not yet recorded; a refused run is recorded `failed`, no task runs. */
  beforeRun: RunTapPoint<[RunTapContext], Refusal>;
  /** Before each attempt of a unit (`attempt`); a refusal fails the unit without further attempts. */
  beforeTask: RunTapPoint<[TaskTapContext], Refusal>;
  /** Every unit recorded (skipped ones too), with its final result. */
  afterTask: RunTapPoint<[TaskTapContext, Omit<TaskResult, 'log'>]>;
  /** The final record, after every afterTask; awaited before the run's `done` resolves. */
  afterRun: RunTapPoint<[Omit<RunRecord, 'tasks'>]>;
}

/** Runs workflows and keeps their records. Provided by the engine plugin. */
export interface WorkflowEngine {
  /** The run lifecycle's tap points (beforeRun, beforeTask, afterTask, afterRun). */
  readonly runTaps: RunTaps;
  /**
   * Cancels a running run: running tasks are stopped (child processes killed by process group,
   * delegated tasks cancelled on their agents), the rest skipped, and the run ends `cancelled`.
   * Resolves with the final record; undefined when no run has that id; a run already ended is
   * returned as it is.
   */
  cancel(runId: string, options?: { by?: string; reason?: string }): Promise<RunRecord | undefined>;
  /** Adds a run-input contributor (see RunInputsContributor); returns a function that removes it. */
  registerRunInputs(contributor: RunInputsContributor): () => void;
  /** Adds a kind of source (`flow`): `{ kind, ref, version }` sources of that kind resolve through it. */
  registerSource(
    kind: string,
    resolve: (source: { kind: string; ref: string; version?: number }) => Promise<ResolvedSource>,
  ): void;
  /**
   * Validates the workflow (every problem with file:line:column, before anything runs), then starts
   * it. Resolves once the run is recorded as started; `done` resolves with the final record.
   */
  start(
    request: RunRequest,
    observer?: (progress: RunProgress) => void,
  ): Promise<{ runId: string; workflowName: string; done: Promise<RunRecord> }>;
  /**
   * A run with its task results and logs; with `{ log: false }` every task's `log` is empty (not
   * read: most of a long run's record is its log, which `GET /executions/:id/log` pages).
   */
  get(runId: string, options?: { log?: boolean }): Promise<RunRecord | undefined>;
  /**
   * What a run was started with (source, vars, values, group, delegation, dry run), to start it
   * again; undefined for an unknown run or one recorded before runs kept their inputs;
   * `'withheld'` when they held a secret (a registered value or a secret-named field), which is
   * never stored.
   */
  request(runId: string): Promise<RunRequest | 'withheld' | undefined>;
  /**
   * Everything `start` checks before a run is recorded, and nothing else: throws what `start`
   * would (a WorkflowValidationError with every problem at its line and column); records nothing.
   */
  validate(request: RunRequest): Promise<{ workflowName: string; tasks: string[]; warnings: WorkflowProblem[] }>;
  /**
   * Follows a running run's log from now on: `written` is how many lines it had (the `seq` of the
   * next one); undefined when the run is not running. The listener runs synchronously as lines
   * are kept, so it must be cheap; `stop` ends the subscription.
   */
  followLog(runId: string, listener: LogFollower): { written: number; stop(): void } | undefined;
  /** Runs, newest first, without task logs. */
  list(filter?: ExecutionFilter): Promise<{ runs: Omit<RunRecord, 'tasks'>[]; total: number }>;
  /** Whether a run delegates to agents (the CLI asks for confirmation on a terminal). */
  delegates(request: RunRequest): Promise<boolean>;
}

export const WorkflowEngineRef = createServiceRef<WorkflowEngine>({
  id: 'workflow.engine',
  description: 'runs workflows and records their executions',
});

/**
 * The one door through which workflow code that is not a task (a hook's script) runs: on a
 * master the engine's local door (a script with side effects runs as `engine.run_as` in the local
 * executor, under the runtime's time, memory and output bounds); in the embedded profile the
 * user's own runtime, as `runner run` runs tasks. Provided by the engine plugin.
 */
export interface ScriptDoor {
  run(source: string, options: LuaRunOptions): Promise<LuaRunResult>;
  /** Who side effects run as, for logs and errors. */
  describe(): string;
}

export const ScriptDoorRef = createServiceRef<ScriptDoor>({
  id: 'engine.script-door',
  description: "runs workflow code that is not a task (hook scripts) through the master's one door (engine plugin)",
});

/** What the master sends an agent for one delegated task. */
export interface DelegatedTask {
  runId: string;
  workflowName: string;
  task: string;
  /** Display name of this unit (`per-host[web-1]`). */
  unit: string;
  /** The rendered Lua script. */
  script: string;
  /** Globals the script reads: vars, values (this agent's entry), item, loop_index, task, workflow, tasks. */
  globals: Record<string, LuaValue>;
  dryRun: boolean;
  timeoutMs?: number;
  /** The workflow's `memory_limit:`; undefined: the agent's default. */
  memoryLimitBytes?: number;
  attempt: number;
}

export interface DelegatedResult {
  success: boolean;
  message?: string;
  outputs?: Record<string, LuaValue>;
}

/** Agent facts the `conditional` delegation strategy reads as `agent.<field>`. */
export interface AgentFacts {
  name: string;
  address: string;
  status: string;
  cpu_usage: number;
  memory_usage: number;
  [key: string]: unknown;
}

/** Runs tasks on agents. Provided by the agent transport on the master; optional for the engine. */
export interface AgentDelegator {
  /** Facts of a known agent; undefined when no agent has that name. */
  agent(name: string): AgentFacts | undefined;
  /** Names of every known agent, connected or not: what a misspelt name is compared with. */
  names?(): string[];
  /** Whether the agent is connected and can take a task now. */
  isAvailable(name: string): boolean;
  /** Runs the task on the agent, streaming its log lines; rejects when the agent is lost. */
  execute(
    agent: string,
    task: DelegatedTask,
    options: { signal: AbortSignal; onLog: (line: TaskLogLine) => void },
  ): Promise<DelegatedResult>;
}

export const AgentDelegatorRef = createServiceRef<AgentDelegator>({
  id: 'agents.delegator',
  description: 'runs delegated tasks on agents (master agent transport)',
});
