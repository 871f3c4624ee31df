import { setMaxListeners } from 'node:events';
import {
  DEFAULT_SCRIPT_ENV,
  formatDuration,
  RunnerError,
  scriptEnvironment,
  roundSeconds,
  sleep,
  stackOf,
  type AgentDelegator,
  type EventBus,
  type Logger,
  type LuaRuntime,
  type LuaValue,
  type Redactor,
  type RunProgress,
  type RunRecord,
  type RunRequest,
  type TaskTapContext,
  type TaskResult,
  type TaskStatus,
  type TemplateEngine,
  type WorkflowEngine,
  type WorkflowEventPayload,
  type WorkflowParser,
  userKeyed,
} from '@runner/plugin-sdk';
import { askBefore, createRunTaps, tellAfter } from './run-taps.js';
import { expandTargets, type GroupLookup } from './group-targets.js';
import { ParseCache } from './parse-cache.js';
import { prepareRun } from './prepare.js';
import { RunInputContributors } from './run-inputs.js';
import { newRunId } from './run-id.js';
import type { RemoteRuns } from './remote-runs.js';
import type { RunStore } from './run-store.js';
import { dispatchTasks } from './task-dispatcher.js';
import { WorkflowSources } from './sources.js';
import { LogFollowers, type LogOrder } from './log-followers.js';
import { createTaskLog, runLogBudget } from './task-log.js';
import { agentLabel, notRunResult } from './unit-records.js';
import { renderBounds, runUnit, type UnitEnvironment, type UnitOutcome } from './unit-runner.js';
import { expandTask, type Unit } from './units.js';
import type { TaskDefinition, WorkflowDefinition } from './workflow-types.js';

export interface EngineDeps {
  parser: WorkflowParser;
  runtime: LuaRuntime;
  /**
   * Where local task scripts run: the master's one door (local-door.ts), which keeps side effects
   * off the master's privileges; absent (embedded `runner run`): the runtime, as the user's own.
   */
  local?: UnitEnvironment['runtime'];
  template: TemplateEngine;
  runs: RunStore;
  events: EventBus;
  logger: Logger;
  delegator?: AgentDelegator;
  /** Agent groups (`delegate_to: group:web`); absent without the agent-groups plugin. */
  groups?: GroupLookup;
  /** Aborted when the kernel stops: every run is cancelled. */
  signal: AbortSignal;
  /** Bytes of log kept per task (engine.task_log_bytes). */
  taskLogBytes: number;
  /** What all tasks of one run may write to the master's own log (engine.run_log_bytes). */
  runLogBytes?: number;
  /** Each attempt of a task without `timeout:` is stopped after this (engine.task_timeout); 0: never. */
  taskTimeoutMs?: number;
  /** What a local task's script may use (engine.memory_limit); undefined: the runtime's default. */
  memoryLimitBytes?: number;
  /** The variables of the master's environment workflow code sees (engine.script_env); default DEFAULT_SCRIPT_ENV. */
  scriptEnvNames?: readonly string[];
  /** Runs other masters sharing the store execute (remote-runs.ts); absent with one master. */
  remote?: Pick<RemoteRuns, 'cancel'>;
  /** Masks a run's contributed secrets (RunInputs.secrets) while it lives; absent in tests that contribute none. */
  redactor?: Redactor;
}

interface TaskView {
  status: TaskStatus;
  message?: string;
  outputs: Record<string, LuaValue>;
  results: {
    name: string;
    item?: LuaValue;
    agent: string;
    status: TaskStatus;
    message?: string;
    outputs?: Record<string, LuaValue>;
  }[];
}

/** Delegated units at once when neither the run (`--forks`) nor the workflow (`forks:`) says. */
export const DEFAULT_FORKS = 10;

const unixSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** How a run is stopped from outside: `cancel` or the kernel stopping. */
interface RunControl {
  controller: AbortController;
  cancelledBy?: string;
  /** The run's error when it ends cancelled. */
  reason?: string;
}

/** engine.run_log_bytes's default, for engines made without it (tests, `runner run`). */
const DEFAULT_RUN_LOG_BYTES = 1024 * 1024;

/** The engine service: validation, then dispatching, running and recording of every unit. */
export function createEngine(deps: EngineDeps): WorkflowEngine & {
  active(): Promise<unknown>[];
  /** The order a running run's log lines were written in so far (log-followers.ts). */
  logOrder(runId: string): LogOrder | undefined;
} {
  const rotation = new Map<string, number>();
  const running = new Map<string, Promise<RunRecord>>();
  const controls = new Map<string, RunControl>();
  // The task names of each live run, in workflow order: `get` lists those not started yet as pending.
  const planned = new Map<string, string[]>();
  const runTaps = createRunTaps();
  const sources = new WorkflowSources();
  // A unit is written to the store once, when it ends (two writes per unit were a good part of a
  // trivial task's cost). Until then it lives here, by run and position, and `get` shows it from
  // here, so readers still see every started unit, its attempts and its log so far.
  const unitsRunning = new Map<string, Map<number, TaskResult>>();
  const followers = new LogFollowers();
  // Every live run listens for the master's stop (and removes its listener when it ends): many
  // runs at once are many listeners by design, not a leak to warn about.
  setMaxListeners(0, deps.signal);

  const contributors = new RunInputContributors();
  const parsed = new ParseCache();
  const prepare = (request: RunRequest) => prepareRun(deps, sources, request, contributors, parsed);

  async function start(
    request: RunRequest,
    observer?: (progress: RunProgress) => void,
  ): ReturnType<WorkflowEngine['start']> {
    if (deps.signal.aborted) throw stoppingError();
    const { workflow, tasks, name, runAgents, warnings, stack, inputs: contributed } = await prepare(request);
    // Masked from here until the run's record is final (released in the `finally` below).
    const forget = maskAll(contributed?.secrets);
    for (const warning of warnings)
      deps.logger.warn(`${warning.file}:${warning.line}:${warning.column}: ${warning.message}`);
    // The kernel may have begun to stop while the workflow was validated.
    if (deps.signal.aborted) {
      forget();
      throw stoppingError();
    }
    const run: Omit<RunRecord, 'tasks'> = {
      id: newRunId(),
      workflowName: name,
      status: 'running',
      dryRun: request.dryRun === true,
      startedAt: new Date().toISOString(),
      duration: 0,
      trigger: request.trigger ?? 'api',
      ...(request.user === undefined ? {} : { user: request.user }),
      ...(request.rerunOf === undefined ? {} : { rerunOf: request.rerunOf }),
      ...(stack === undefined ? {} : { stack }),
      counts: {},
    };
    const refused =
      runTaps.beforeRun.taps.length === 0
        ? undefined
        : await askBefore(runTaps.beforeRun, { runId: run.id, workflowName: name, request });
    // Kept without who started it and why: running it again is someone else's start (and a
    // production run's confirmation is theirs to give again).
    const { user: _user, trigger: _trigger, rerunOf: _rerunOf, confirm: _confirm, ...inputs } = request;
    await deps.runs.insertRun(run, inputs).catch((error: unknown) => {
      forget();
      throw error;
    });
    let done: Promise<RunRecord>;
    if (refused !== undefined) {
      done = refuseRun(run, refused, observer);
    } else {
      const control: RunControl = { controller: new AbortController() };
      controls.set(run.id, control);
      planned.set(
        run.id,
        tasks.map((t) => t.name),
      );
      // The run's --delegate-to with its groups expanded (prepare did the tasks' own).
      const expanded = { ...request, delegateTo: runAgents };
      done = execute(run, workflow, tasks, expanded, observer ?? (() => {}), control, contributed?.globals);
    }
    // Tracked either way: the kernel's stop waits for every run to be recorded as ended.
    running.set(run.id, done);
    done
      .finally(() => {
        forget();
        running.delete(run.id);
        controls.delete(run.id);
        planned.delete(run.id);
        unitsRunning.delete(run.id);
      })
      .catch(() => {});
    return { runId: run.id, workflowName: name, done };
  }

  /** A run a before-run tap refused: recorded as failed with the reason; no task ran. */
  async function refuseRun(
    run: Omit<RunRecord, 'tasks'>,
    reason: string,
    observer?: (progress: RunProgress) => void,
  ): Promise<RunRecord> {
    const finished: Omit<RunRecord, 'tasks'> = {
      ...run,
      status: 'failed',
      completedAt: new Date().toISOString(),
      error: reason,
    };
    await deps.runs.finishRun(finished);
    await deps.runs.flush();
    deps.logger.warn(`workflow ${run.workflowName} not started: ${reason}`, {
      workflow: run.workflowName,
      run_id: run.id,
    });
    deps.events.emit('workflow.failed', {
      workflow_name: run.workflowName,
      run_id: run.id,
      ...stackOf(run),
      status: 'failed',
      duration: 0,
      started_at: unixSeconds(run.startedAt),
      completed_at: unixSeconds(finished.completedAt as string),
    });
    observer?.({ kind: 'run', run: finished });
    await tellAfter(runTaps.afterRun, deps.logger, 'afterRun', finished);
    return { ...finished, tasks: [] };
  }

  async function cancel(runId: string, options: { by?: string; reason?: string } = {}): Promise<RunRecord | undefined> {
    const control = controls.get(runId);
    const done = running.get(runId);
    // A run another master executes is cancelled there; its final record is read here after.
    if (!control || !done) {
      await deps.remote?.cancel(runId, options);
      return deps.runs.get(runId);
    }
    if (!control.controller.signal.aborted) {
      control.cancelledBy = options.by;
      control.reason = options.reason ?? `cancelled${options.by ? ` by ${options.by}` : ''}`;
      // A RunnerError reason is what the Lua runtime reports for a script it stops, so the task
      // that was running says why instead of "This operation was aborted".
      control.controller.abort(new RunnerError('cancelled', control.reason, { status: 409 }));
    }
    return done;
  }

  async function execute(
    run: Omit<RunRecord, 'tasks'>,
    workflow: WorkflowDefinition,
    tasks: TaskDefinition[],
    request: RunRequest,
    observe: (progress: RunProgress) => void,
    control: RunControl,
    contributed?: Record<string, Record<string, unknown>>,
  ): Promise<RunRecord> {
    const { controller } = control;
    const onStop = () => {
      if (controller.signal.aborted) return;
      control.reason = 'cancelled: runner is stopping';
      controller.abort(new RunnerError('cancelled', control.reason, { status: 503 }));
    };
    deps.signal.addEventListener('abort', onStop, { once: true });
    const started = performance.now();
    const views = userKeyed<TaskView>();
    const results: TaskResult[] = [];
    let seq = 0;
    const env = scriptEnvironment(deps.scriptEnvNames ?? DEFAULT_SCRIPT_ENV);
    const base: Record<string, unknown> = {
      vars: workflow.vars,
      env,
      tasks: views,
      workflow: { name: run.workflowName, run_id: run.id },
      dry_run: run.dryRun,
      ...contributed,
    };
    const payload = (status: string, completedAt = 0): WorkflowEventPayload => ({
      workflow_name: run.workflowName,
      run_id: run.id,
      ...stackOf(run),
      status,
      duration: roundSeconds((performance.now() - started) / 1000),
      started_at: unixSeconds(run.startedAt),
      completed_at: completedAt,
    });

    const liveUnits = new Map<number, TaskResult>();
    unitsRunning.set(run.id, liveUnits);
    followers.open(run.id);
    deps.events.emit('workflow.started', { ...payload('running'), duration: 0 });
    observe({ kind: 'run', run });
    const runLogger = deps.logger.child({ workflow: run.workflowName, run_id: run.id });
    runLogger.info('workflow started', { tasks: tasks.length, dry_run: run.dryRun });
    const mirrored = runLogBudget(runLogger, deps.runLogBytes ?? DEFAULT_RUN_LOG_BYTES);

    // Record position of each result: the final record lists them in this order, as the store does.
    const seqOf = new Map<TaskResult, number>();
    // After-task taps run as units end; the run's after-taps wait for them.
    const told = new Set<Promise<void>>();
    const taskContext = (result: TaskResult, attempt: number): TaskTapContext => ({
      runId: run.id,
      workflowName: run.workflowName,
      task: result.task,
      unit: result.name,
      agent: result.agent,
      attempt,
      dryRun: run.dryRun,
    });
    const announce = (result: TaskResult) => {
      const { log: _log, ...summary } = result;
      observe({ kind: 'task', runId: run.id, task: summary });
    };
    const record = (result: TaskResult, seqNo: number) => {
      seqOf.set(result, seqNo);
      // From here readers find the unit in the store (queued for the turn's write, see RunStore).
      deps.runs.queueTask(run.id, seqNo, result);
      liveUnits.delete(seqNo);
      announce(result);
      if (runTaps.afterTask.taps.length > 0) {
        const { log: _log, ...summary } = result;
        const telling = tellAfter(
          runTaps.afterTask,
          runLogger,
          'afterTask',
          taskContext(result, result.attempts),
          summary,
        );
        told.add(telling);
        void telling.then(() => told.delete(telling));
      }
    };

    const outcome = await dispatchTasks<TaskDefinition, Unit>(
      tasks,
      { parallel: workflow.parallel, forks: request.forks ?? workflow.forks ?? DEFAULT_FORKS },
      {
        // The units of one task and loop item on several agents are one fan-out: they run together.
        fanOut: (unit) => (unit.agents.length > 0 ? String(unit.loopIndex ?? 0) : undefined),
        expand: (task) =>
          expandTask(task, {
            template: deps.template,
            syntax: workflow.template,
            base,
            runAgents: request.delegateTo,
            delegator: deps.delegator,
            expandAgents: (names) => expandTargets(deps.groups, names),
            loopItemsFromText: (text) => deps.parser.loopItemsFromText(text),
            nextSeq: () => seq++,
            workflowName: run.workflowName,
            rotation,
            bounds: (task) =>
              renderBounds(task, {
                defaultTimeoutMs: deps.taskTimeoutMs || undefined,
                signal: controller.signal,
                memoryLimitBytes: workflow.memoryLimitBytes ?? deps.memoryLimitBytes,
              }),
          }),
        run: async (unit) => {
          const agent = agentLabel(unit);
          const result: TaskResult = {
            name: unit.name,
            task: unit.task.name,
            item: unit.item as LuaValue,
            agent,
            status: 'running',
            attempts: 0,
            startedAt: new Date().toISOString(),
            duration: 0,
            log: [],
            logTruncated: false,
          };
          results.push(result);
          const t0 = performance.now();
          const log = createTaskLog(
            deps.taskLogBytes,
            (line) => {
              followers.line(run.id, unit.name, agent, line);
              if (request.verbose || line.level !== 'debug')
                observe({ kind: 'log', runId: run.id, task: unit.name, line });
            },
            mirrored.mirror({ task: unit.name }),
          );
          result.log = log.lines;
          seqOf.set(result, unit.seq);
          liveUnits.set(unit.seq, result);
          announce(result);
          const taskPayload = (status: string, error?: string) => ({
            workflow_name: run.workflowName,
            run_id: run.id,
            ...stackOf(run),
            task_name: unit.name,
            agent,
            status,
            attempt: Math.max(result.attempts, 1),
            duration: roundSeconds((performance.now() - t0) / 1000),
            ...(error ? { error } : {}),
          });
          deps.events.emit('task.started', taskPayload('running'));
          const outcome: UnitOutcome = await runUnit(
            unit,
            {
              runId: run.id,
              workflowName: run.workflowName,
              workflow,
              syntax: workflow.template,
              dryRun: run.dryRun,
              runtime: deps.local ?? deps.runtime,
              template: deps.template,
              delegator: deps.delegator,
              base,
              values: workflow.values,
              signal: controller.signal,
              sleep,
              defaultTimeoutMs: deps.taskTimeoutMs || undefined,
              memoryLimitBytes: workflow.memoryLimitBytes ?? deps.memoryLimitBytes,
              beforeAttempt:
                runTaps.beforeTask.taps.length === 0
                  ? undefined
                  : (attempt) => askBefore(runTaps.beforeTask, taskContext(result, attempt)),
            },
            log,
            (attempt) => (result.attempts = attempt),
          ).catch((error: unknown): UnitOutcome => ({
            status: 'failed',
            message: error instanceof Error ? error.message : String(error),
            attempts: result.attempts,
          }));

          const failed = outcome.status === 'failed';
          // A unit stopped by its run's cancellation did not fail: it says so (the scheduler still
          // sees a failure, which stops what has not started).
          const stopped = failed && controller.signal.aborted;
          Object.assign(result, {
            status: stopped ? 'cancelled' : failed && unit.task.ignoreErrors ? 'ignored' : outcome.status,
            message: outcome.message,
            outputs: outcome.outputs,
            attempts: outcome.attempts,
            completedAt: new Date().toISOString(),
            duration: roundSeconds((performance.now() - t0) / 1000),
            logTruncated: log.truncated,
          });
          if (failed) log.add('error', `${stopped ? 'cancelled' : 'failed'}: ${outcome.message ?? 'no message'}`);
          record(result, unit.seq);
          deps.events.emit(
            failed ? 'task.failed' : 'task.completed',
            taskPayload(result.status, failed ? outcome.message : undefined),
          );
          const view = (views[unit.task.name] ??= { status: 'running', outputs: userKeyed<LuaValue>(), results: [] });
          view.results.push({
            name: unit.name,
            item: result.item,
            agent,
            status: result.status,
            message: result.message,
            outputs: result.outputs,
          });
          if (result.outputs) Object.assign(view.outputs, result.outputs);
          view.message = result.message ?? view.message;
          return { status: outcome.status, message: outcome.message };
        },
        skipped: (task, reason) => {
          const result = notRunResult({ name: task.name, task: task.name, status: 'skipped', message: reason });
          results.push(result);
          record(result, seq++);
          views[task.name] = { status: 'skipped', message: reason, outputs: userKeyed<LuaValue>(), results: [] };
        },
        // A task that failed before it started (its loop or delegate_to did not render): recorded
        // with the message and announced by task.failed alone, with attempt 0, since no attempt ran.
        expandFailed: (task, message) => {
          const status = task.ignoreErrors ? 'ignored' : 'failed';
          const now = new Date().toISOString();
          const log = createTaskLog(
            deps.taskLogBytes,
            (line) => followers.line(run.id, task.name, 'localhost', line),
            mirrored.mirror({ task: task.name }),
          );
          log.add('error', `failed: ${message}`);
          const result = notRunResult({ name: task.name, task: task.name, status, message, log: log.lines, at: now });
          results.push(result);
          record(result, seq++);
          views[task.name] = { status, message, outputs: userKeyed<LuaValue>(), results: [] };
          deps.events.emit('task.failed', {
            workflow_name: run.workflowName,
            run_id: run.id,
            ...stackOf(run),
            task_name: task.name,
            agent: 'localhost',
            status,
            attempt: 0,
            duration: 0,
            error: message,
          });
        },
        // Loop items that never started because another task's failure stopped the run.
        dropped: (unit, _task, reason) => {
          const result = notRunResult({
            name: unit.name,
            task: unit.task.name,
            item: unit.item as LuaValue,
            agent: agentLabel(unit),
            status: 'skipped',
            message: reason,
          });
          results.push(result);
          record(result, unit.seq);
        },
        taskFinished: (task, status) => {
          const view = (views[task.name] ??= { status, outputs: userKeyed<LuaValue>(), results: [] });
          view.status = status;
        },
      },
      controller.signal,
    );
    deps.signal.removeEventListener('abort', onStop);

    const counts: Partial<Record<TaskStatus, number>> = {};
    for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
    const failed = [...outcome.outcomes.values()].includes('failed');
    const cancelled = controller.signal.aborted;
    const finished: Omit<RunRecord, 'tasks'> = {
      ...run,
      status: cancelled ? 'cancelled' : failed ? 'failed' : 'succeeded',
      completedAt: new Date().toISOString(),
      duration: roundSeconds((performance.now() - started) / 1000),
      ...(cancelled && control.cancelledBy !== undefined ? { cancelledBy: control.cancelledBy } : {}),
      // The cancellation explains a cancelled run better than the task it interrupted.
      error: cancelled ? control.reason : outcome.stoppedBy ? `task ${outcome.stoppedBy} failed` : undefined,
      counts,
    };
    // With the order its lines were written in: the stored log reads in it, as the live one did.
    await deps.runs.finishRun(finished, followers.order(run.id));
    unitsRunning.delete(run.id);
    followers.close(run.id, finished.status);
    await deps.runs.flush();
    const eventPayload = payload(finished.status, unixSeconds(finished.completedAt as string));
    eventPayload.duration = finished.duration;
    deps.events.emit(finished.status === 'succeeded' ? 'workflow.completed' : 'workflow.failed', eventPayload);
    // For people, the message says how long in words; the field keeps seconds, to the millisecond.
    runLogger.info(`workflow ${finished.status} in ${formatDuration(finished.duration * 1000)}`, {
      status: finished.status,
      duration: Math.round(finished.duration * 1000) / 1000,
      counts,
      ...(mirrored.dropped() > 0 ? { log_lines_not_mirrored: mirrored.dropped() } : {}),
    });
    observe({ kind: 'run', run: finished });
    if (told.size > 0) await Promise.all([...told]);
    if (runTaps.afterRun.taps.length > 0) await tellAfter(runTaps.afterRun, runLogger, 'afterRun', finished);
    // Sorted as `get` returns them (by position, not start time: skipped units never started).
    return { ...finished, tasks: results.slice().sort((a, b) => (seqOf.get(a) ?? 0) - (seqOf.get(b) ?? 0)) };
  }

  /** Registers each value with the redactor; the function returned forgets them all. */
  function maskAll(values: readonly string[] | undefined): () => void {
    if (!values?.length || !deps.redactor) return () => {};
    const forgets = values.map((value) => deps.redactor!.addSecret(value));
    return () => {
      for (const forgetOne of forgets.splice(0)) forgetOne();
    };
  }

  return {
    runTaps,
    registerRunInputs: (contributor) => contributors.register(contributor),
    cancel,
    registerSource: (kind, resolve) => sources.register(kind, resolve),
    start,
    get: async (runId, options) => {
      const record = await deps.runs.get(runId, unitsRunning.get(runId), options);
      const names = planned.get(runId);
      return record?.status === 'running' && names ? withPending(record, names) : record;
    },
    list: (filter) => deps.runs.list(filter),
    followLog: (runId, listener) => followers.follow(runId, listener),
    logOrder: (runId) => followers.order(runId),
    request: (runId) => deps.runs.request(runId),
    async validate(request) {
      const { name, tasks, warnings } = await prepare(request);
      return { workflowName: name, tasks: tasks.map((t) => t.name), warnings };
    },
    async delegates(request) {
      if (request.delegateTo?.length) return true;
      const { tasks } = await prepare(request);
      return tasks.some((t) => t.delegateTo !== undefined);
    },
    active: () => [...running.values()],
  };
}

/** A master shutting down is unavailable, not asked something wrong: 503, so a client may retry elsewhere. */
function stoppingError(): RunnerError {
  return new RunnerError('engine_stopping', 'the engine is stopping; no new runs are accepted', { status: 503 });
}

/**
 * A live run as readers see it: its units so far, then a `pending` entry per task that has none
 * yet (so a page shows what is still to come), and counts of all of them (`n of N tasks`).
 */
export function withPending(record: RunRecord, names: readonly string[]): RunRecord {
  const started = new Set(record.tasks.map((t) => t.task));
  const pending = names
    .filter((name) => !started.has(name))
    .map((name) => ({
      ...notRunResult({ name, task: name, status: 'pending', message: '' }),
      agent: '',
      message: undefined,
    }));
  const tasks = [...record.tasks, ...pending];
  const counts: Partial<Record<TaskStatus, number>> = {};
  for (const t of tasks) counts[t.status] = (counts[t.status] ?? 0) + 1;
  return { ...record, tasks, counts };
}
