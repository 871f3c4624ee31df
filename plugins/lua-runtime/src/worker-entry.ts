// The Lua worker thread: runs one task script at a time in its own V8 isolate, whose heap limit
// (resourceLimits) is the script's memory limit, so that a script that allocates without bound or
// a library call that never returns costs this worker, not the process. Module functions are not
// here: each is a stub that asks the main thread, which runs the plugin's implementation with the
// task's call context (worker-runtime.ts).
import {
  formatBytes,
  LuaError,
  luaLazyTable,
  type LogFields,
  type Logger,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaModuleSpec,
  type LuaValue,
} from '@runner/plugin-sdk';
import type { EventEmitter } from 'node:events';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { ModuleRegistry } from './module-registry.js';
import { LuaRuntimeService } from './runtime.js';
import {
  CALL_ID,
  decodeError,
  decodeValue,
  encodeError,
  encodeValue,
  type EncodedError,
  type FromWorker,
  type ToWorker,
  type WorkerData,
  type WorkerRunOptions,
} from './worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('worker-entry.ts runs in a worker thread only');
const data = workerData as WorkerData;
const lazyFlag = new Int32Array(data.lazySignal);

function post(message: FromWorker): void {
  port!.postMessage(message);
}

/** What the worker keeps of a run while its script runs. */
interface WorkerRun {
  id: number;
  controller: AbortController;
  /** Lua functions handed to the main thread, by the id it calls them with. */
  handles: Map<number, { call(...args: LuaValue[]): Promise<LuaValue[]> }>;
  ids: Map<object, number>;
  logger: Logger;
}

const runs = new Map<number, WorkerRun>();
const FOREIGN_FUNCTION = {
  kind: 'lua-function',
  call: () => Promise.reject(new Error('a Lua function of another script cannot be called from this one')),
} as const;
const runOfLogger = new WeakMap<Logger, WorkerRun>();
const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextCall = 0;

function encoders(run: WorkerRun) {
  return {
    luaFunction(ref: object): number {
      let id = run.ids.get(ref);
      if (id === undefined) {
        id = run.ids.size + 1;
        run.ids.set(ref, id);
        run.handles.set(id, ref as WorkerRun['handles'] extends Map<number, infer H> ? H : never);
      }
      return id;
    },
  };
}

function decoders(run: WorkerRun) {
  return {
    // Unknown: a function of another script, which pushing then refuses as it does inline.
    luaFunction: (id: number) => run.handles.get(id) ?? FOREIGN_FUNCTION,
    // A JavaScript function a module returned: calling it asks the main thread.
    jsFunction:
      (id: number) =>
      (...args: unknown[]): unknown =>
        callMain(run, { jsFn: id }, args, undefined),
    lazyTable: (slot: number) => luaLazyTable(lazySource(run, slot)),
  };
}

/**
 * The source of a lazy table (`tasks`, `env`) whose entries stay on the main thread: an entry is
 * fetched, synchronously, the first time the script reads it (Lua reads a table without waiting).
 * The main thread answers on the sync port and wakes this thread through the shared flag.
 */
function lazySource(run: WorkerRun, slot: number): Record<string, unknown> {
  const cache = new Map<string, unknown>();
  let keys: string[] | null = null;
  const fetch = (key: string | null): unknown => syncRequest({ type: 'lazy', id: run.id, slot, key });
  const get = (key: string): unknown => {
    if (!cache.has(key)) cache.set(key, decodeValue(fetch(key), decoders(run)));
    return cache.get(key);
  };
  return new Proxy({} as Record<string, unknown>, {
    get: (_target, key) => (typeof key === 'string' ? get(key) : undefined),
    has: (_target, key) => typeof key === 'string' && get(key) !== undefined,
    getOwnPropertyDescriptor(_target, key) {
      if (typeof key !== 'string') return undefined;
      const value = get(key);
      return value === undefined ? undefined : { value, enumerable: true, configurable: true, writable: false };
    },
    ownKeys: () => (keys ??= fetch(null) as string[]),
  });
}

/** Posts a request the main thread answers at once on the sync port; blocks until it has. */
function syncRequest(message: FromWorker): unknown {
  Atomics.store(lazyFlag, 0, 0);
  post(message);
  Atomics.wait(lazyFlag, 0, 0);
  return receiveMessageOnPort(data.lazyPort)?.message;
}

/**
 * Calls a module function (or a JavaScript function a module gave) on the main thread. The call
 * blocks this thread until the function has returned there: a function that answers at once answers
 * here at once too, so it also works where Lua cannot wait (a gsub callback, a sort comparator), as
 * inline; one that returns a promise makes the call return a promise, settled by a later message.
 */
function callMain(
  run: WorkerRun,
  target: { module?: string; fn?: string; jsFn?: number },
  args: unknown[],
  signal: AbortSignal | undefined,
): unknown {
  const callId = ++nextCall;
  const encoded = encodeValue(args, encoders(run)) as unknown[];
  const answer = syncRequest({ type: 'call', id: run.id, callId, ...target, args: encoded }) as
    { pending: true } | { ok: true; value: unknown } | { ok: false; error: EncodedError } | undefined;
  if (answer === undefined) throw new Error('the main thread did not answer a module call');
  if (!('pending' in answer)) {
    if (answer.ok) return decodeValue(answer.value, decoders(run));
    const error = decodeError(answer.error) as Error & { [CALL_ID]?: number };
    error[CALL_ID] = callId;
    throw error;
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => post({ type: 'call-abort', callId, error: encodeError(signal?.reason) });
    signal?.addEventListener('abort', onAbort, { once: true });
    pending.set(callId, {
      resolve(value) {
        signal?.removeEventListener('abort', onAbort);
        resolve(decodeValue(value, decoders(run)));
      },
      reject(error) {
        signal?.removeEventListener('abort', onAbort);
        (error as Error & { [CALL_ID]?: number })[CALL_ID] = callId;
        reject(error);
      },
    });
  });
}

function runLogger(id: number, bound: LogFields): Logger {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, fields?: LogFields): void => {
      const all = fields === undefined ? bound : { ...bound, ...fields };
      try {
        post({ type: 'log', id, level, message, fields: all });
      } catch {
        // A field cloning refuses (a function): the line still goes out.
        post({ type: 'log', id, level, message });
      }
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => {
      const child = runLogger(id, { ...bound, ...fields });
      const run = runs.get(id);
      if (run !== undefined) runOfLogger.set(child, run);
      return child;
    },
  };
  return logger;
}

/** The runtime with a stub for every module function; rebuilt when the main thread's modules change. */
let runtime = newRuntime([]);
let lastEnv: WorkerRunOptions['env'];

function newRuntime(modules: readonly LuaModuleSpec[]): LuaRuntimeService {
  const registry = new ModuleRegistry();
  for (const spec of modules) {
    const implementation: Record<string, (call: LuaCallContext, ...args: LuaValue[]) => unknown> = {};
    for (const fn of Object.keys(spec.functions)) {
      implementation[fn] = (call, ...args) => {
        const run = runOfLogger.get(call.logger);
        if (run === undefined) throw new Error(`${spec.name}.${fn}: no run of this worker is calling`);
        return callMain(run, { module: spec.name, fn }, args, call.signal);
      };
    }
    registry.provide(spec, implementation as LuaModuleImplementation<string>);
  }
  return new LuaRuntimeService(registry, {
    sliceMs: data.sliceMs,
    hookInstructions: data.hookInstructions,
    heapGuardRatio: 0,
    memoryLimitBytes: data.memoryLimitBytes,
  });
}

async function runScript(id: number, source: string, options: WorkerRunOptions): Promise<void> {
  if (!options.sameEnv) lastEnv = options.env;
  const run: WorkerRun = {
    id,
    controller: new AbortController(),
    handles: new Map(),
    ids: new Map(),
    logger: runLogger(id, {}),
  };
  runs.set(id, run);
  runOfLogger.set(run.logger, run);
  try {
    const globals = decodeValue(options.globals, decoders(run)) as Record<string, LuaValue>;
    const { values } = await runtime.run(source, {
      chunkName: options.chunkName,
      globals,
      dryRun: options.dryRun,
      logger: run.logger,
      signal: run.controller.signal,
      timeoutMs: options.timeoutMs,
      memoryLimitBytes: options.memoryLimitBytes,
      cwd: options.cwd,
      env: options.sameEnv ? lastEnv : options.env,
      io: {
        stdin: options.stdin,
        stdout: options.stdoutSink ? (text) => post({ type: 'output', id, stream: 'stdout', text }) : undefined,
        stderr: options.stderrSink ? (text) => post({ type: 'output', id, stream: 'stderr', text }) : undefined,
      },
      run: options.run,
    });
    post({ type: 'done', id, ok: true, values: encodeValue(values, encoders(run)) as unknown[] });
  } catch (error) {
    post({ type: 'done', id, ok: false, error: encodeError(overLimit(error) ?? error) });
  } finally {
    runs.delete(id);
    writeCachesOnce();
  }
}

let cachesWritten = false;
/**
 * After the first script, once the run has its answer: the kernel's vendor loader (build.mjs
 * VENDORED) writes this worker's code cache of fengari, which then holds the Lua VM's functions
 * that script compiled, so the next process's worker does not compile them again. The event name
 * is the loader's WRITE_VENDOR_CACHES (kernel/src/vendor-loader.ts); from source nothing listens.
 */
function writeCachesOnce(): void {
  if (cachesWritten) return;
  cachesWritten = true;
  setImmediate(() => (process as EventEmitter).emit('runner:write-vendor-caches'));
}

/**
 * A script that ran out of memory where no check could see it coming (`s = s .. s` doubles a string
 * in one instruction, so no hook runs between doublings; V8 refuses the buffer at its size limit)
 * fails with fengari's words; in a worker, what it holds is the script's, so say which limit it broke.
 */
function overLimit(error: unknown): LuaError | undefined {
  if (!(error instanceof LuaError) || !/not enough memory|could not handle/.test(error.message)) return undefined;
  const prefix = /^task [^:]+: /.exec(error.message)?.[0] ?? '';
  return new LuaError(
    `${prefix}memory limit of ${formatBytes(data.memoryLimitBytes)} exceeded (${error.message.slice(prefix.length)})`,
    { details: error.details },
  );
}

async function callLua(id: number, callId: number, fnId: number, args: unknown[]): Promise<void> {
  const run = runs.get(id);
  const handle = run?.handles.get(fnId);
  try {
    if (run === undefined || handle === undefined)
      throw new Error('the script this Lua function belongs to has ended; it cannot be called any more');
    const values = await handle.call(...(decodeValue(args, decoders(run)) as LuaValue[]));
    post({ type: 'reply-lua', callId, ok: true, values: encodeValue(values, encoders(run)) as unknown[] });
  } catch (error) {
    post({ type: 'reply-lua', callId, ok: false, error: encodeError(error) });
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'run':
      if (message.modules !== undefined) {
        runtime.close();
        runtime = newRuntime(message.modules);
      }
      void runScript(message.id, message.source, message.options);
      return;
    case 'abort':
      runs.get(message.id)?.controller.abort(decodeError(message.error));
      return;
    case 'reply': {
      const call = pending.get(message.callId);
      pending.delete(message.callId);
      if (message.ok) call?.resolve(message.value);
      else call?.reject(decodeError(message.error!));
      return;
    }
    case 'call-lua':
      void callLua(message.id, message.callId, message.fnId, message.args);
      return;
  }
});
post({ type: 'ready' });
