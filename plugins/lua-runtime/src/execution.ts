import { InvalidInputError, LuaError, LuaTimeoutError, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';
import fengari, { type LuaProxy, type LuaState } from 'fengari';
import { ConversionError, pushJs, toJs, type ToJsOptions } from './convert.js';
import {
  describeJsError,
  isMemoryError,
  LuaFunctionHandle,
  SLICE,
  STOP,
  type Host,
  type HostExecution,
  type HostTask,
} from './host.js';
import { jsString } from './lua-strings.js';
import type { Resumable } from './time-slicer.js';

const { lua, lauxlib } = fengari;

type Outcome = { ok: true; values: LuaValue[] } | { ok: false; error: Error };

export interface ExecutionOptions {
  host: Host;
  context: Omit<LuaCallContext, 'signal'>;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The chunk name the script was loaded with: its frames are the ones errors point at. */
  chunkName: string;
  /** Put before the messages of the errors the execution ends with (`task build: `). */
  prefix: string;
  /** Convert unconvertible results to text rather than failing (REPL). */
  lenient: boolean;
  /** Called once the script has ended (its results converted), before its promise settles. */
  onEnd?: () => void;
  /** Called each time the main coroutine pauses before its end: its slice ran out, or it awaits. */
  onPause?: () => void;
}

/** Where in the script a coroutine is (or failed). */
interface ScriptPosition {
  line: number;
  /** Lua's rendering of the chunk and line: `[string "build"]:4`. */
  at: string;
}

/** A coroutine the execution runs: the main chunk, or a function JavaScript called. */
class Task implements HostTask, Resumable {
  readonly exec: Execution;
  readonly thread: LuaState;
  readonly main: boolean;
  done = false;
  #nargs: number;
  readonly #settle: (outcome: Outcome) => void;

  constructor(exec: Execution, thread: LuaState, nargs: number, main: boolean, settle: (outcome: Outcome) => void) {
    this.exec = exec;
    this.thread = thread;
    this.#nargs = nargs;
    this.main = main;
    this.#settle = settle;
  }

  step(): void {
    if (this.done) return;
    const exec = this.exec;
    if (exec.stopError !== null) {
      exec.finishStopped();
      return;
    }
    const host = exec.host;
    const nargs = this.#nargs;
    this.#nargs = 0;
    const previous = host.running;
    host.running = this;
    host.pendingYield = null;
    host.timeSlicer.beginSlice();
    try {
      let status: number;
      try {
        status = lua.lua_resume(this.thread, null, nargs);
      } finally {
        host.running = previous;
      }
      exec.afterResume(this, status);
    } catch (error) {
      // fengari turns most JavaScript errors into Lua errors, but not all (an error inside its own
      // error handling, a state left inconsistent by one). This runs from setImmediate or a promise
      // callback: whatever escapes here would take the process down, so it ends this script instead.
      this.complete({ ok: false, error: internalError(exec.prefix, error) });
    }
  }

  complete(outcome: Outcome): void {
    if (this.done) return;
    this.done = true;
    this.exec.forget(this);
    this.#settle(outcome);
  }
}

/**
 * The `call` argument of module functions. A class, not an object literal with a getter: such a
 * literal's getter is a new closure for every run, which gives every context a hidden class of its
 * own, and V8 keeps those classes (and so the closure, the execution and its whole Lua state)
 * through every young-generation collection until a full one. Measured with the literal: 52 KB of
 * every trivial run outlived the scavenges, which then took 15-35 ms each and set the WebSocket
 * event latency p99 of a 1,000-task run (test/bench/ws-fanout.mjs).
 */
class CallContext implements LuaCallContext {
  readonly dryRun: boolean;
  readonly logger: LuaCallContext['logger'];
  readonly run: LuaCallContext['run'];
  readonly #exec: Execution;

  constructor(context: Omit<LuaCallContext, 'signal'>, exec: Execution) {
    this.dryRun = context.dryRun;
    this.logger = context.logger;
    this.run = context.run;
    this.#exec = exec;
  }

  get signal(): AbortSignal {
    return this.#exec.callSignal();
  }
}

/**
 * One run of a chunk (or one REPL eval) and the coroutines it starts: its call context, deadline,
 * stop, and the end that invalidates its function handles. Other executions in the process run
 * while its coroutines wait.
 */
export class Execution implements HostExecution {
  readonly host: Host;
  readonly context: LuaCallContext;
  readonly toJsOptions: ToJsOptions;
  readonly prefix: string;
  readonly #chunkName: string;
  /** Made when a module first asks for the signal: most scripts never call one. */
  #controller: AbortController | null = null;
  readonly #deadline: number;
  readonly #timeoutMs: number | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #tasks = new Set<Task>();
  #main: Task | null = null;
  /** Where the main coroutine was when the hook last made it yield; null once it awaits instead. */
  #hookPosition: ScriptPosition | null = null;
  #stop: { error: Error; withPosition: boolean } | null = null;
  #ended = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #onEnd: (() => void) | undefined;
  readonly #onPause: (() => void) | undefined;

  constructor(options: ExecutionOptions) {
    this.host = options.host;
    this.#onEnd = options.onEnd;
    this.#onPause = options.onPause;
    this.context = new CallContext(options.context, this);
    this.prefix = options.prefix;
    this.#chunkName = options.chunkName;
    this.#timeoutMs = options.timeoutMs;
    this.#signal = options.signal;
    this.#deadline = options.timeoutMs === undefined ? Infinity : performance.now() + options.timeoutMs;
    this.toJsOptions = {
      lenient: options.lenient,
      functionRef: (proxy) => new LuaFunctionHandle(this.host, this, proxy),
    };
  }

  /** The signal module functions get as `call.signal`; made on first use. */
  callSignal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#stop !== null) this.#controller.abort(this.#stop.error);
    }
    return this.#controller.signal;
  }

  get stopError(): Error | null {
    return this.#stop?.error ?? null;
  }

  /** Runs the function (and `nargs` arguments) on `thread`; settles with its return values. */
  start(thread: LuaState, nargs: number): Promise<LuaValue[]> {
    const signal = this.#signal;
    if (signal?.aborted) return Promise.reject(this.#abortError(signal.reason));
    return new Promise((resolve, reject) => {
      const task = new Task(this, thread, nargs, true, (outcome) => {
        this.#end();
        if (outcome.ok) resolve(outcome.values);
        else reject(outcome.error);
      });
      this.#main = task;
      this.#tasks.add(task);
      signal?.addEventListener('abort', this.#onAbort, { once: true });
      if (this.#timeoutMs !== undefined) this.#timer = setTimeout(() => this.checkDeadline(Infinity), this.#timeoutMs);
      this.host.timeSlicer.wake(task);
    });
  }

  /** Calls a Lua function of this script from JavaScript, in a coroutine of its own. */
  callFunction(proxy: LuaProxy, args: readonly LuaValue[]): Promise<LuaValue[]> {
    if (this.#ended) {
      return Promise.reject(
        new LuaError(`${this.prefix}the script this Lua function belongs to has ended; it cannot be called any more`),
      );
    }
    if (this.#stop !== null) return Promise.reject(this.#stop.error);
    const thread = this.host.newTaskThread();
    if (!lua.lua_checkstack(thread, args.length + 1))
      return Promise.reject(new InvalidInputError('too many arguments for a Lua function'));
    proxy(thread);
    try {
      for (let i = 0; i < args.length; i++) pushJs(thread, args[i], this.host.pushOptions, `argument #${i + 1}`);
    } catch (error) {
      if (error instanceof ConversionError)
        return Promise.reject(new InvalidInputError(`cannot call a Lua function: ${error.message}`));
      throw error;
    }
    return new Promise((resolve, reject) => {
      const task = new Task(this, thread, args.length, false, (outcome) => {
        if (outcome.ok) resolve(outcome.values);
        else reject(outcome.error);
      });
      this.#tasks.add(task);
      // Never inside the caller's resume: the caller may be a module function running in Lua.
      queueMicrotask(() => this.host.timeSlicer.wake(task));
    });
  }

  checkDeadline(now: number): void {
    if (now < this.#deadline || this.#stop !== null || this.#ended) return;
    this.stop(
      new LuaTimeoutError(`${this.prefix}timed out after ${this.#timeoutMs} ms`, {
        details: { timeoutMs: this.#timeoutMs },
      }),
      true,
    );
  }

  /**
   * Stops every coroutine of the execution with `error`. A coroutine that is running right now
   * (this was called from its hook or a module function) stops at its next hook.
   */
  stop(error: Error, withPosition = false): void {
    if (this.#ended || this.#stop !== null) return;
    this.#stop = { error, withPosition };
    this.#controller?.abort(error);
    if (this.host.running !== null && this.host.running.exec === this) return;
    this.finishStopped();
  }

  finishStopped(): void {
    if (this.#stop === null) return;
    let error = this.#stop.error;
    const main = this.#main;
    if (this.#stop.withPosition && main !== null) {
      const position = this.#hookPosition ?? this.#position(main.thread);
      if (position !== null) {
        error = new LuaTimeoutError(`${error.message} (at ${position.at})`, {
          details: { ...(error as LuaTimeoutError).details, line: position.line, chunk: this.#chunkName },
        });
      }
    }
    for (const task of [...this.#tasks]) if (task !== main) task.complete({ ok: false, error });
    main?.complete({ ok: false, error });
  }

  notePosition(task: HostTask, L: LuaState): void {
    if (task === this.#main) this.#hookPosition = this.#position(L);
  }

  forget(task: Task): void {
    this.#tasks.delete(task);
  }

  afterResume(task: Task, status: number): void {
    const host = this.host;
    const reason = host.pendingYield;
    host.pendingYield = null;
    if (this.#stop !== null) {
      // Nobody will take the result: a rejection must not become an unhandled one.
      if (status === lua.LUA_YIELD && reason !== null && reason !== SLICE && reason !== STOP)
        reason.promise.then(undefined, () => {});
      this.finishStopped();
      return;
    }
    const thread = task.thread;
    if (status === lua.LUA_OK) {
      const n = lua.lua_gettop(thread);
      // Raises the frame's top over many results, which the API would otherwise refuse to index.
      lua.lua_checkstack(thread, 8);
      const values: LuaValue[] = new Array(n);
      try {
        for (let i = 0; i < n; i++) values[i] = toJs(thread, i + 1, this.toJsOptions, `return value #${i + 1}`);
      } catch (error) {
        lua.lua_settop(thread, 0);
        if (!(error instanceof ConversionError)) throw error;
        task.complete({
          ok: false,
          error: new LuaError(`${task.main ? this.prefix : ''}${this.#chunkName}: ${error.message}`),
        });
        return;
      }
      lua.lua_settop(thread, 0);
      task.complete({ ok: true, values });
      return;
    }
    if (status === lua.LUA_YIELD) {
      if (task === this.#main) this.#onPause?.();
      if (reason === SLICE) {
        host.timeSlicer.enqueue(task);
        return;
      }
      if (reason !== null && reason !== STOP) {
        if (task === this.#main) this.#hookPosition = null;
        reason.promise.then(
          (value) => {
            reason.ok = true;
            reason.value = value;
            if (!task.done) host.timeSlicer.wake(task);
          },
          (error: unknown) => {
            reason.ok = false;
            reason.error = error;
            if (!task.done) host.timeSlicer.wake(task);
          },
        );
        return;
      }
      task.complete({
        ok: false,
        error: new LuaError(`${task.main ? this.prefix : ''}attempt to yield from outside a coroutine`),
      });
      return;
    }
    task.complete({ ok: false, error: this.#luaError(task) });
  }

  readonly #onAbort = (): void => {
    this.stop(this.#abortError(this.#signal?.reason));
  };

  #abortError(reason: unknown): Error {
    return abortError(this.prefix, reason);
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener('abort', this.#onAbort);
    // Module calls still in flight have no one to report to: let them clean up. (The error is
    // made only when needed: capturing its stack is a good part of a trivial run's cost.)
    const controller = this.#controller;
    if (this.#tasks.size > 0 || (controller !== null && !controller.signal.aborted)) {
      const ended = new LuaError(`${this.prefix}the script has ended before this Lua function finished`);
      for (const task of [...this.#tasks]) task.complete({ ok: false, error: ended });
      if (controller !== null && !controller.signal.aborted) controller.abort(ended);
    }
    this.host.stdout.flush();
    this.host.stderr.flush();
    this.#onEnd?.();
  }

  /** The innermost frame of `thread` that runs code of the script itself. */
  #position(thread: LuaState): ScriptPosition | null {
    const ar = new lua.lua_Debug();
    for (let level = 0; lua.lua_getstack(thread, level, ar) !== 0; level++) {
      lua.lua_getinfo(thread, 'Sl', ar);
      if (ar.currentline > 0 && ar.source !== null && jsString(ar.source) === this.#chunkName) {
        return { line: ar.currentline, at: `${jsString(ar.short_src!)}:${ar.currentline}` };
      }
    }
    return null;
  }

  #luaError(task: Task): LuaError {
    const thread = task.thread;
    const host = this.host;
    // When fengari's own error handling failed (a JavaScript error while it ran the handler), the
    // thread is dead with no error value: the JavaScript error is all there is to report.
    // What is left is the JavaScript error itself (a light userdata), or nothing at all.
    const prefix = task.main ? this.prefix : '';
    if (lua.lua_gettop(thread) === 0) return internalError(prefix, host.lastJsError?.error);
    // An error pushed by fengari's error handling may lie past the frame's top, which the API
    // would refuse to index ("unacceptable index"): raise the top over it first.
    lua.lua_checkstack(thread, 8);
    const type = lua.lua_type(thread, -1);
    if (type === lua.LUA_TLIGHTUSERDATA) return internalError(prefix, lua.lua_touserdata(thread, -1));
    // The handler itself is left when calling it failed, which happens when memory has run out.
    if (type === lua.LUA_TFUNCTION && host.isNativeErrorHandler(thread, -1)) {
      return internalError(
        prefix,
        new Error('a JavaScript error that fengari could not handle (the process may be out of memory)'),
      );
    }
    let raw: string;
    let value: LuaValue | undefined;
    if (type === lua.LUA_TSTRING || type === lua.LUA_TNUMBER) {
      raw = jsString(lua.lua_tostring(thread, -1)!);
    } else if (type === lua.LUA_TNIL) {
      raw = 'nil';
    } else {
      value = toJs(thread, -1, { ...this.toJsOptions, lenient: true }, 'error');
      raw = `(error object is a ${jsString(lua.lua_typename(thread, type))} value)`;
    }
    const position = this.#position(thread);
    // Errors raised from JavaScript carry no position: give them the script's line.
    const message = position !== null && !/^[^\n]*?:\d+: /.test(raw) ? `${position.at}: ${raw}` : raw;
    lauxlib.luaL_traceback(host.L, thread, null, 0);
    const traceback = jsString(lua.lua_tostring(host.L, -1)!);
    lua.lua_pop(host.L, 1);
    const cause = host.lastJsError !== null && host.lastJsError.message === raw ? host.lastJsError.error : undefined;
    const details: Record<string, unknown> = { chunk: this.#chunkName, traceback };
    if (position !== null) details.line = position.line;
    if (value !== undefined) details.value = value;
    return new LuaError(`${task.main ? this.prefix : ''}${message}`, { cause, details });
  }
}

/**
 * An error that escaped fengari's error handling, as the script's error. Memory exhaustion in the
 * JavaScript engine (a table past V8's Map limit, a string past its length limit) is reported as
 * Lua reports its own: `not enough memory`.
 */
function internalError(prefix: string, error: unknown): LuaError {
  const text = isMemoryError(error)
    ? describeJsError(error)
    : `internal error of the Lua runtime: ${describeJsError(error)}`;
  return new LuaError(`${prefix}${text}`, { cause: error });
}

/** A RunnerError reason (e.g. the engine's cancellation) passes through; anything else is a timeout. */
export function abortError(prefix: string, reason: unknown): Error {
  if (
    reason instanceof Error &&
    typeof (reason as { code?: unknown }).code === 'string' &&
    typeof (reason as { status?: unknown }).status === 'number'
  ) {
    return reason;
  }
  const why = reason instanceof Error ? reason.message : reason === undefined ? 'aborted' : String(reason);
  return new LuaTimeoutError(`${prefix}stopped: ${why}`, { cause: reason });
}
