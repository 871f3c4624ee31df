import { RunnerError } from './errors.js';
import type { Logger } from './logger.js';
import type { LuaCallContext, LuaValue } from './lua-module.js';
import { createServiceRef } from './service-ref.js';

/** Where a script's standard streams go. Without sinks, lines go to the logger (stdout at info, stderr at warn). */
export interface LuaIoOptions {
  /** What `io.read` and `io.stdin` read; empty by default. */
  stdin?: string | Uint8Array;
  /** Receives everything written to stdout (`print`, `io.write`) as it is written, instead of the log. */
  stdout?: (text: string) => void;
  /** Receives everything written to `io.stderr`, instead of the log. */
  stderr?: (text: string) => void;
}

/** What both a run and a REPL session are set up with. */
export interface LuaEnvironmentOptions {
  /** Globals the script sees (`vars`, `values`, `item`, `task`, `workflow`, `env`, `tasks`, ...). */
  globals?: Readonly<Record<string, LuaValue>>;
  /** Passed to module functions; also the `dry_run` global unless `globals` sets it. Default false. */
  dryRun?: boolean;
  /** The log that `print`, `io.write` and module functions write to. */
  logger: Logger;
  io?: LuaIoOptions;
  /** Directory that relative file names in `io`/`os` resolve against; default the process's. */
  cwd?: string;
  /** What `os.getenv` reads and `os.execute`/`io.popen` commands get; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The most memory the script may take (bytes; default 512 MiB). Enforced for the strings that
   * one library call builds (`string.rep`, `table.concat`): a larger one fails the script with
   * `memory limit of 512 MiB exceeded (...)` before anything is allocated. Tables and strings a
   * script grows step by step are not measured against it yet.
   */
  memoryLimitBytes?: number;
}

/** One execution of a chunk. */
export interface LuaRunOptions extends LuaEnvironmentOptions {
  /**
   * Lua's chunk name. A plain name shows in runtime errors as `[string "<name>"]:<line>:`;
   * `=name` shows as `name:<line>:`, as in Lua.
   */
  chunkName: string;
  /** Stops the script (a LuaTimeoutError, or the signal's reason when that is a RunnerError). */
  signal?: AbortSignal;
  /** Stops the script after this long, even one that spins the CPU inside `pcall`. */
  timeoutMs?: number;
  /** Where the script runs; module functions receive it, and errors are prefixed `task <task>: `. */
  run?: LuaCallContext['run'];
}

export interface LuaRunResult {
  /** The chunk's return values, converted as `LuaValue` documents. */
  values: LuaValue[];
}

export interface LuaSessionOptions extends LuaEnvironmentOptions {
  /** Name errors show, as in `stdin:1: ...`; default `stdin`. */
  chunkName?: string;
}

export interface LuaEvalOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * A REPL session: one Lua state whose globals live from `eval` to `eval`. Evals run one at a time,
 * in the order they were called.
 */
export interface LuaSession {
  /**
   * Runs a line (or several) as the `lua` REPL does: first as `return <source>`, and if that does
   * not compile, as a statement. Resolves with the values it returned; values JavaScript cannot hold
   * (userdata, threads, tables with cycles) come back as their `tostring` text.
   * A syntax error is an InvalidInputError whose `details.incomplete` is true when more input could
   * complete it (the REPL then asks for another line).
   */
  eval(source: string, options?: LuaEvalOptions): Promise<LuaValue[]>;
  /** Stops what runs, closes files the session opened. Later evals fail. */
  close(): void;
  readonly closed: boolean;
}

/** The Lua 5.3 runtime that runs task scripts and the REPL (the `lua-runtime` plugin). */
export interface LuaRuntime {
  /**
   * Checks that a chunk compiles, running nothing. Throws an InvalidInputError
   * `<chunkName>:<line>: <message>` with `details: { line, column?, incomplete }`.
   */
  compile(source: string, chunkName: string): void;
  /**
   * Runs a chunk in a fresh Lua state of its own. Rejects with an InvalidInputError for a syntax
   * error, a LuaError for a Lua error, a LuaTimeoutError when `timeoutMs` or `signal` stops it.
   */
  run(source: string, options: LuaRunOptions): Promise<LuaRunResult>;
  createSession(options: LuaSessionOptions): LuaSession;
  /**
   * Whether `source` is proven to reach nothing outside its Lua state: bounded (no loop, no
   * function of its own) and calling only the few pure library functions (`tostring`, `string.len`,
   * `os.time`, ...), no module function, `io`, `os.execute` or `require`. A master runs such a
   * script in its own process; any other local script goes through its local executor (the one
   * door). False when unsure (a syntax error, a runtime that cannot tell).
   */
  sideEffectFree?(source: string): boolean;
}

/** A script raised an error (or a value JavaScript cannot hold came out of it). */
export class LuaError extends RunnerError {
  constructor(
    message: string,
    options: {
      cause?: unknown;
      /** `line` (of the script), `chunk`, `traceback`, `value` (a non-string error value). */
      details?: Record<string, unknown>;
    } = {},
  ) {
    super('lua_error', message, { status: 422, ...options });
  }
}

/** A script was stopped by its timeout or its abort signal. */
export class LuaTimeoutError extends RunnerError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super('timeout', message, { status: 504, ...options });
  }
}

export const LuaRuntimeRef = createServiceRef<LuaRuntime>({
  id: 'lua.runtime',
  description: 'runs Lua 5.3 task scripts and REPL sessions (the Lua runtime plugin)',
});

/**
 * The globals the engine gives every task script and template (workflow-language.md): the names
 * a template may start with, and names no Lua module may take. One list for the workflow
 * checker and the Lua runtime.
 */
export const SCRIPT_GLOBALS: readonly string[] = Object.freeze([
  'vars',
  'values',
  'item',
  'loop_index',
  'task',
  'workflow',
  'env',
  'tasks',
  'dry_run',
  'agent',
  // A run of a stack (RunInputs): its name, environment and variables, and its secrets' values.
  'stack',
  'secrets',
]);
