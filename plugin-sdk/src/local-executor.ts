import { isRunnerError, RunnerError } from './errors.js';
import type { LogFields } from './logger.js';
import type { LuaCallContext, LuaValue } from './lua-module.js';
import type { WorkflowObservation } from './metrics.js';
import { createServiceRef } from './service-ref.js';

/**
 * The wire between a master and its local executor: the `runner executor` child the master starts
 * as an unprivileged user (`engine.run_as`) to run local task scripts that have side effects, so
 * that what they do to files, processes and the network happens without the master's privileges.
 * Node's IPC channel carries these messages (advanced serialization: structured clone).
 */

/** The CLI command the master starts the executor with (not meant for people). */
export const EXECUTOR_COMMAND = 'executor';

/** One script to run: what `LuaRuntime.run` takes, less the logger and the signal (messages). */
export interface ExecutorTask {
  id: number;
  source: string;
  chunkName: string;
  globals: Record<string, LuaValue>;
  dryRun: boolean;
  timeoutMs?: number;
  memoryLimitBytes?: number;
  /** What `os.getenv` reads and commands get: the environment the engine gives scripts. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  run?: LuaCallContext['run'];
  /**
   * Bytes of log lines sent for this task (engine.task_log_bytes, counted as the engine counts
   * them): the first line past them is still sent (the master's task log then truncates, with its
   * note), later ones only counted, in `done`'s `droppedLogLines`.
   */
  logBytes?: number;
}

/** An error crossing the channel: enough to rebuild a RunnerError of the same code and details. */
export interface ExecutorError {
  code: string;
  message: string;
  status?: number;
  details?: Record<string, unknown>;
}

export type MasterToExecutor =
  | { type: 'run'; task: ExecutorTask }
  | { type: 'cancel'; id: number; reason: ExecutorError }
  | { type: 'call-result'; callId: number; answer?: unknown; error?: ExecutorError };

export type ExecutorToMaster =
  | { type: 'ready'; pid: number; uid: number }
  | { type: 'log'; id: number; level: 'debug' | 'info' | 'warn' | 'error'; message: string; fields?: LogFields }
  | { type: 'done'; id: number; values?: LuaValue[]; error?: ExecutorError; droppedLogLines?: number }
  /** A module call of task `id` that the master serves (see MasterCallForwarder); answered by `call-result`. */
  | { type: 'call'; callId: number; id: number; module: string; request: unknown }
  /** A Lua `metrics` call of task `id`; one-way (the master records it or logs why not). */
  | { type: 'metric'; id: number; observation: WorkflowObservation };

/**
 * Forwarded module calls: a Lua module whose work needs what only the master holds (`state.*` its
 * store, `ssh.*` its SSH profiles' credentials) hands each call of a script running in the
 * executor to the master, which serves it through the handler the module's plugin registered
 * there (ExecutorCallServer) and answers. The plugin owns both ends, so it defines the request
 * and the answer (structured-clone values: bytes travel as Uint8Array). The master trusts the
 * executor with nothing but which running task asks: the workflow, task, run and dry-run a
 * handler gets come from its own record of that task, and it checks the request as untrusted input.
 */

/** The executor's side (executor plugin): sends a call to the master for a task running here. */
export interface MasterCallForwarder {
  /** Rejects at once when no task of `run` is running here; aborting `signal` stops waiting. */
  forward(
    module: string,
    request: unknown,
    run: { runId: string; task: string },
    signal?: AbortSignal,
  ): Promise<unknown>;
}

export const MasterCallForwarderRef = createServiceRef<MasterCallForwarder>({
  id: 'executor.master-calls',
  description: "the local executor's way to have the master serve a module call (executor plugin)",
});

/** Which task asks, as the master recorded it when it sent the task to the executor. */
export interface ForwardedCaller {
  workflow: string;
  task: string;
  runId: string;
  dryRun: boolean;
}

/**
 * Serves one module's forwarded calls on the master. `signal` aborts when the task's run is
 * cancelled or the task ended in the executor (a call it no longer waits for).
 */
export type ForwardedCallHandler = (request: unknown, caller: ForwardedCaller, signal: AbortSignal) => unknown;

/** The master's side (engine plugin): the handlers of the modules whose calls its executor forwards. */
export interface ExecutorCallServer {
  /** Registers the handler of `module`'s calls; a module has one (a second is a ConflictError). */
  serve(module: string, handler: ForwardedCallHandler): void;
}

export const ExecutorCallServerRef = createServiceRef<ExecutorCallServer>({
  id: 'executor.call-server',
  description: "the master's server of module calls its local executor forwards (engine plugin)",
});

/** An error as it crosses the channel: its code, status and details survive, its class does not. */
export function toExecutorError(error: unknown): ExecutorError {
  if (isRunnerError(error)) {
    return { code: error.code, message: error.message, status: error.status, details: plainDetails(error.details) };
  }
  return { code: 'internal', message: error instanceof Error ? error.message : String(error), status: 500 };
}

/** The RunnerError an ExecutorError stands for: callers match on its code and read its details. */
export function fromExecutorError(error: ExecutorError): RunnerError {
  return new RunnerError(error.code, error.message, { status: error.status, details: error.details });
}

// Details are facts (line, chunk, traceback); a value structured clone cannot copy is left out.
function plainDetails(details: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!details) return undefined;
  try {
    return structuredClone(details);
  } catch {
    return Object.fromEntries(
      Object.entries(details).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)),
    );
  }
}
