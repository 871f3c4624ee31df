import {
  formatBytes,
  isThenable,
  LuaError,
  LuaTimeoutError,
  RunnerError,
  type LuaCallContext,
  type LuaFunctionRef,
  type LuaModuleSpec,
  type LuaRunOptions,
  type LuaRunResult,
  type LuaRuntime,
  type LuaSession,
  type LuaSessionOptions,
  type LuaValue,
} from '@runner/plugin-sdk';
import { abortError } from './execution.js';
import { describeJsError } from './host.js';
import { DEFAULT_MEMORY_LIMIT_BYTES } from './lib-string-limits.js';
import type { ModuleFunction, ModuleRegistry } from './module-registry.js';
import { LuaRuntimeService, type LuaRuntimeOptions } from './runtime.js';
import { WorkerPool, type LuaWorker } from './worker-pool.js';
import {
  decodeError,
  decodeValue,
  encodeError,
  encodeValue,
  type EncodedError,
  type FromWorker,
  type WorkerRunOptions,
} from './worker-protocol.js';

export interface WorkerRuntimeOptions extends LuaRuntimeOptions {
  /** Lua workers alive at most; runs beyond wait for one. Default 16. */
  maxWorkers?: number;
  /** Idle workers kept for the next runs. Default 2. */
  idleWorkers?: number;
  /**
   * How long a worker has, after its script's timeout or the run's cancel, to stop the script
   * itself (ms) before it is terminated. Default 250.
   */
  stopGraceMs?: number;
}

/**
 * The Lua runtime with every task script in a worker thread of its own (worker-entry.ts), from a
 * pool. The main thread keeps the modules, the REPL's sessions and `compile`, which run inline.
 */
export class WorkerLuaRuntime implements LuaRuntime {
  readonly #registry: ModuleRegistry;
  readonly #inline: LuaRuntimeService;
  readonly #pool: WorkerPool;
  readonly #graceMs: number;
  readonly #runs = new Set<WorkerRun>();
  readonly #unsubscribe: () => void;
  #nextId = 0;
  #closed = false;
  /** The memory limit of the last run: the limit a worker started ahead of need gets. */
  #lastLimit = DEFAULT_MEMORY_LIMIT_BYTES;
  #modulesVersion = 0;

  /** `inline`: the runtime for sessions and `compile`, when another owner shares it (auto-runtime.ts). */
  constructor(registry: ModuleRegistry, options: WorkerRuntimeOptions = {}, inline?: LuaRuntimeService) {
    this.#registry = registry;
    this.#inline = inline ?? new LuaRuntimeService(registry, options);
    this.#graceMs = options.stopGraceMs ?? 250;
    this.#pool = new WorkerPool({
      max: options.maxWorkers ?? 16,
      idle: options.idleWorkers ?? 2,
      sliceMs: options.sliceMs,
      hookInstructions: options.hookInstructions,
    });
    // A worker installs the modules' stubs at its first run after they changed.
    this.#unsubscribe = registry.onChange(() => this.#modulesVersion++);
  }

  /** Workers alive, and idle (for tests and `runner doctor`-like views). */
  get workers(): { alive: number; idle: number } {
    return { alive: this.#pool.size, idle: this.#pool.idleCount };
  }

  compile(source: string, chunkName: string): void {
    // A run's scripts are compiled before it starts: the time to start a worker for its first task.
    this.warm();
    this.#inline.compile(source, chunkName);
  }

  createSession(options: LuaSessionOptions): LuaSession {
    return this.#inline.createSession(options);
  }

  sideEffectFree(source: string): boolean {
    return this.#inline.sideEffectFree(source);
  }

  async run(source: string, options: LuaRunOptions): Promise<LuaRunResult> {
    if (this.#closed) throw stoppedError();
    const prefix = options.run === undefined ? '' : `task ${options.run.task}: `;
    if (options.signal?.aborted) throw abortError(prefix, options.signal.reason);
    const limit = options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
    this.#lastLimit = limit;
    let worker: LuaWorker;
    try {
      worker = await this.#pool.acquire(limit);
    } catch (error) {
      if (this.#closed) throw stoppedError();
      throw error;
    }
    if (this.#closed) {
      this.#pool.release(worker, false);
      throw stoppedError();
    }
    if (options.signal?.aborted) {
      this.#pool.release(worker, true);
      throw abortError(prefix, options.signal.reason);
    }
    const modules =
      worker.modulesVersion === this.#modulesVersion
        ? undefined
        : this.#registry.list().map((spec) => ({ ...spec, functions: { ...spec.functions } }));
    worker.modulesVersion = this.#modulesVersion;
    const run = new WorkerRun(++this.#nextId, worker, this.#registry, options, prefix, this.#graceMs, (healthy) => {
      this.#runs.delete(run);
      this.#pool.release(worker, healthy);
    });
    this.#runs.add(run);
    return run.start(source, modules);
  }

  /** Starts a worker ahead of the first run (a start costs 70-90 ms of CPU, more wall time under load). */
  warm(): void {
    if (!this.#closed) this.#pool.warm(this.#lastLimit);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    for (const run of [...this.#runs]) run.fail(stoppedError(), false);
    this.#pool.close();
    this.#inline.close();
  }
}

/** One script running in a worker, seen from the main thread. */
class WorkerRun {
  readonly #id: number;
  readonly #worker: LuaWorker;
  readonly #registry: ModuleRegistry;
  readonly #options: LuaRunOptions;
  readonly #prefix: string;
  readonly #graceMs: number;
  readonly #release: (healthy: boolean) => void;
  readonly #context: Omit<LuaCallContext, 'signal'>;
  readonly #lazy: Readonly<Record<string, unknown>>[] = [];
  readonly #jsFunctions: ((...args: any[]) => unknown)[] = [];
  readonly #refs = new Map<number, LuaFunctionRef>();
  readonly #refIds = new WeakMap<object, number>();
  /** Module calls in flight, by the worker's call id: their signals. */
  readonly #calls = new Map<number, AbortController>();
  /** Errors of module calls that failed, by call id: a script's error caused by one gets it as cause. */
  readonly #failures = new Map<number, unknown>();
  readonly #luaCalls = new Map<number, { resolve(values: LuaValue[]): void; reject(error: Error): void }>();
  #nextLuaCall = 0;
  #timer: NodeJS.Timeout | undefined;
  #settle: ((outcome: { ok: true; values: LuaValue[] } | { ok: false; error: Error }) => void) | null = null;

  constructor(
    id: number,
    worker: LuaWorker,
    registry: ModuleRegistry,
    options: LuaRunOptions,
    prefix: string,
    graceMs: number,
    release: (healthy: boolean) => void,
  ) {
    this.#id = id;
    this.#worker = worker;
    this.#registry = registry;
    this.#options = options;
    this.#prefix = prefix;
    this.#graceMs = graceMs;
    this.#release = release;
    this.#context = { dryRun: options.dryRun ?? false, logger: options.logger, run: options.run };
  }

  start(source: string, modules: LuaModuleSpec[] | undefined): Promise<LuaRunResult> {
    const options = this.#options;
    const env = options.env ?? process.env;
    // process.env (the default) may change between runs; a run's own env object is the engine's, fixed.
    const sameEnv = options.env !== undefined && this.#worker.lastEnv === env;
    this.#worker.lastEnv = env;
    const workerOptions: WorkerRunOptions = {
      chunkName: options.chunkName,
      globals: encodeValue(options.globals ?? {}, this.#encoders),
      dryRun: options.dryRun ?? false,
      timeoutMs: options.timeoutMs,
      memoryLimitBytes: options.memoryLimitBytes,
      cwd: options.cwd ?? process.cwd(),
      env: sameEnv ? undefined : env,
      sameEnv,
      stdin: typeof options.io?.stdin === 'string' ? new TextEncoder().encode(options.io.stdin) : options.io?.stdin,
      stdoutSink: options.io?.stdout !== undefined,
      stderrSink: options.io?.stderr !== undefined,
      run: options.run,
    };
    const promise = new Promise<LuaRunResult>((resolve, reject) => {
      this.#settle = (outcome) => (outcome.ok ? resolve({ values: outcome.values }) : reject(outcome.error));
    });
    this.#worker.onMessage = (message) => this.#onMessage(message);
    this.#worker.onRunExit = (error) => this.fail(this.#exitError(error), false);
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    // The worker stops a script at its timeout itself (with the line it was at); this is for a
    // worker that cannot, being inside one long library call.
    if (options.timeoutMs !== undefined) {
      this.#timer = setTimeout(() => this.#stopStuck(this.#timeoutError()), options.timeoutMs + this.#graceMs);
    }
    this.#worker.post({ type: 'run', id: this.#id, source, options: workerOptions, modules });
    return promise;
  }

  /** Ends the run with `error`; `healthy` false terminates the worker. */
  fail(error: Error, healthy: boolean): void {
    this.#end({ ok: false, error }, healthy);
  }

  readonly #onAbort = (): void => {
    const error = abortError(this.#prefix, this.#options.signal?.reason);
    this.#worker.post({ type: 'abort', id: this.#id, error: encodeError(error) });
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#stopStuck(error), this.#graceMs);
  };

  #stopStuck(error: Error): void {
    this.fail(error, false);
  }

  #timeoutError(): Error {
    const ms = this.#options.timeoutMs;
    return new LuaTimeoutError(`${this.#prefix}timed out after ${ms} ms (inside a library call)`, {
      details: { timeoutMs: ms },
    });
  }

  #exitError(error: Error): Error {
    if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      const limit = this.#options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
      return new LuaError(
        `${this.#prefix}memory limit of ${formatBytes(limit)} exceeded (the script's worker ran out of memory and was ended)`,
        { cause: error },
      );
    }
    return new LuaError(`${this.#prefix}the Lua worker stopped: ${error.message}`, { cause: error });
  }

  #end(outcome: { ok: true; values: LuaValue[] } | { ok: false; error: Error }, healthy: boolean): void {
    const settle = this.#settle;
    if (settle === null) return;
    this.#settle = null;
    clearTimeout(this.#timer);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    const ended = new LuaError(`${this.#prefix}the script has ended before this call finished`);
    for (const controller of this.#calls.values()) controller.abort(ended);
    this.#calls.clear();
    for (const call of this.#luaCalls.values()) call.reject(ended);
    this.#luaCalls.clear();
    this.#failures.clear();
    this.#release(healthy);
    settle(outcome);
  }

  readonly #encoders = {
    luaFunction: (ref: object): number => {
      // 0: another script's, which the worker refuses to push as the inline runtime does.
      return this.#refIds.get(ref) ?? 0;
    },
    jsFunction: (fn: (...args: any[]) => unknown): number => this.#jsFunctions.push(fn) - 1,
    lazyTable: (source: Readonly<Record<string, unknown>>): number => this.#lazy.push(source) - 1,
  };

  readonly #decoders = {
    luaFunction: (id: number): LuaFunctionRef => {
      let ref = this.#refs.get(id);
      if (ref === undefined) {
        ref = { kind: 'lua-function', call: (...args: LuaValue[]) => this.#callLua(id, args) };
        this.#refs.set(id, ref);
        this.#refIds.set(ref, id);
      }
      return ref;
    },
  };

  #callLua(fnId: number, args: LuaValue[]): Promise<LuaValue[]> {
    if (this.#settle === null) {
      return Promise.reject(
        new LuaError(`${this.#prefix}the script this Lua function belongs to has ended; it cannot be called any more`),
      );
    }
    const callId = ++this.#nextLuaCall;
    let encoded: unknown[];
    try {
      encoded = encodeValue(args, this.#encoders) as unknown[];
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#luaCalls.set(callId, { resolve, reject });
      this.#worker.post({ type: 'call-lua', id: this.#id, callId, fnId, args: encoded });
    });
  }

  #onMessage(message: FromWorker): void {
    switch (message.type) {
      case 'done':
        if (message.id !== this.#id) return;
        if (message.ok) {
          this.#end({ ok: true, values: decodeValue(message.values, this.#decoders) as LuaValue[] }, true);
        } else {
          this.#end({ ok: false, error: this.#scriptError(message.error!) }, true);
        }
        return;
      case 'log':
        this.#options.logger[message.level](message.message, message.fields);
        return;
      case 'output':
        (message.stream === 'stdout' ? this.#options.io?.stdout : this.#options.io?.stderr)?.(message.text);
        return;
      case 'call':
        this.#call(message.callId, message.module, message.fn, message.jsFn, message.args);
        return;
      case 'call-abort':
        this.#calls.get(message.callId)?.abort(decodeError(message.error));
        return;
      case 'reply-lua': {
        const call = this.#luaCalls.get(message.callId);
        this.#luaCalls.delete(message.callId);
        if (message.ok) call?.resolve(decodeValue(message.values, this.#decoders) as LuaValue[]);
        else call?.reject(decodeError(message.error!));
        return;
      }
      case 'lazy':
        this.#worker.answerSync(this.#lazyAnswer(message.slot, message.key));
        return;
    }
  }

  /** The error the script ended with; a stop for the run's own signal is the very reason it gave. */
  #scriptError(encoded: EncodedError): Error {
    const signal = this.#options.signal;
    if (signal?.aborted) {
      const stopped = abortError(this.#prefix, signal.reason);
      if (stopped.message === encoded.message) return stopped;
    }
    const cause = encoded.causeCall === undefined ? undefined : this.#failures.get(encoded.causeCall);
    return decodeError(encoded, cause);
  }

  #lazyAnswer(slot: number, key: string | null): unknown {
    const source = this.#lazy[slot];
    if (source === undefined) return key === null ? [] : undefined;
    if (key === null) return Object.keys(source);
    if (!Object.prototype.hasOwnProperty.call(source, key)) return undefined;
    try {
      return encodeValue(source[key], this.#encoders);
    } catch {
      return undefined;
    }
  }

  /**
   * Runs a module function for the worker, which waits on the sync port: a value returned at once
   * is answered at once; a promise is answered `pending` and its outcome posted when it settles.
   */
  #call(
    callId: number,
    module: string | undefined,
    fn: string | undefined,
    jsFn: number | undefined,
    args: unknown[],
  ): void {
    const controller = new AbortController();
    let result: unknown;
    try {
      const decoded = decodeValue(args, this.#decoders) as LuaValue[];
      result =
        jsFn !== undefined
          ? this.#jsFunctions[jsFn](...decoded)
          : this.#moduleFunction(module, fn)({ ...this.#context, signal: controller.signal }, ...decoded);
    } catch (error) {
      this.#worker.answerSync(this.#failure(callId, error));
      return;
    }
    if (!isThenable(result)) {
      this.#worker.answerSync(this.#success(callId, result));
      return;
    }
    this.#calls.set(callId, controller);
    this.#worker.answerSync({ pending: true });
    Promise.resolve(result)
      .then(
        (value) => this.#success(callId, value),
        (error: unknown) => this.#failure(callId, error),
      )
      .then((reply) => {
        this.#calls.delete(callId);
        if (this.#settle !== null) this.#worker.post({ type: 'reply', callId, ...reply });
      });
  }

  #success(callId: number, value: unknown): { ok: true; value: unknown } | { ok: false; error: EncodedError } {
    try {
      return { ok: true, value: encodeValue(value, this.#encoders) };
    } catch (error) {
      return this.#failure(callId, error);
    }
  }

  /** As the script would have seen it inline: host.ts gives V8's memory and stack errors Lua's words. */
  #failure(callId: number, error: unknown): { ok: false; error: EncodedError } {
    this.#failures.set(callId, error);
    return { ok: false, error: { ...encodeError(error), message: describeJsError(error) } };
  }

  #moduleFunction(module: string | undefined, fn: string | undefined): ModuleFunction {
    const found = this.#registry
      .modules()
      .find((m) => m.spec.name === module)
      ?.functions.get(fn ?? '');
    if (found === undefined) throw new Error(`${module}.${fn} is not provided on the main thread`);
    return found;
  }
}

function stoppedError(): RunnerError {
  return new RunnerError('unavailable', 'the Lua runtime has stopped', { status: 503 });
}
