import {
  isThenable,
  LuaError,
  type LuaCallContext,
  type LuaFunctionRef,
  type LuaValue,
  type Logger,
} from '@runner/plugin-sdk';
import fengari, { type LuaJsFunction, type LuaProxy, type LuaState } from 'fengari';
import { ConversionError, pushJs, toJs, type PushOptions, type ToJsOptions } from './convert.js';
import { installBaseLibrary } from './lib-base.js';
import { createStdFiles, installIoLibrary, type LuaFile, type StdFiles } from './lib-io.js';
import { installOsLibrary } from './lib-os.js';
import { checkConcatSize, installStringLimits } from './lib-string-limits.js';
import { concatBytes, jsString, luaString } from './lua-strings.js';
import type { ModuleFunction, RegisteredModule } from './module-registry.js';
import type { TimeSlicer } from './time-slicer.js';
import { copyState, globalOf, type GlobalState } from './state-copy.js';

const { lua, lauxlib, lualib } = fengari;

/** The coroutine yielded because its time slice is spent; resume it next turn. */
export const SLICE = Symbol('slice');
/** The coroutine yielded because its script is being stopped; never resume it. */
export const STOP = Symbol('stop');

/** The coroutine yielded to wait for a promise; resume it (with no values) once `promise` settles. */
export interface AwaitRecord<T = unknown> {
  readonly what: string;
  readonly promise: PromiseLike<T>;
  ok: boolean;
  value?: T;
  error?: unknown;
  /** Pushes the results for the continuation; returns how many. */
  push(L: LuaState, value: T): number;
}

/** Why a coroutine yielded to the host (as opposed to a `coroutine.yield` of the script). */
export type HostYield = typeof SLICE | typeof STOP | AwaitRecord<any>;

/** What the host needs of the execution whose coroutine is running. */
export interface HostExecution {
  readonly context: LuaCallContext;
  readonly toJsOptions: ToJsOptions;
  /** Set once the script is being stopped (timeout, abort, end of the run). */
  readonly stopError: Error | null;
  /** Stops the execution when its deadline has passed. */
  checkDeadline(now: number): void;
  /** Stops every coroutine of the execution with `error`. */
  stop(error: Error): void;
  /** Put before the messages of the errors the execution ends with (`task build: `). */
  readonly prefix: string;
  callFunction(proxy: LuaProxy, args: readonly LuaValue[]): Promise<LuaValue[]>;
  /**
   * Called by the hook just before `task` yields: the script's line is exact now, while after a
   * hook's yield Lua reports the instruction before the one it stopped at.
   */
  notePosition(task: HostTask, L: LuaState): void;
}

export interface HostTask {
  readonly exec: HostExecution;
}

/** What a state is set up with for the run (or the session) it serves. */
export interface HostEnvironment {
  logger: Logger;
  dryRun: boolean;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdin: Uint8Array;
  stdoutSink?: (text: string) => void;
  stderrSink?: (text: string) => void;
  /** See LuaEnvironmentOptions.memoryLimitBytes; undefined: DEFAULT_MEMORY_LIMIT_BYTES. */
  memoryLimitBytes?: number;
}

export interface HostOptions {
  modules: readonly RegisteredModule[];
  timeSlicer: TimeSlicer;
  /** Instructions between two runs of the count hook (the granularity of slices and timeouts). */
  hookInstructions: number;
  /**
   * A host built with the same modules whose state is copied rather than built again (see
   * state-copy.ts). It must never run a script: a copy would carry what the script did.
   */
  template?: Host;
}

/*
 * What the runtime notes about a state or a thread is kept on fengari's own objects, under symbols,
 * rather than in WeakMaps or WeakSets: every entry of those is an ephemeron, which the garbage
 * collector traces apart, and with a state per run they took most of a trivial run's time in GC
 * (a state copy measured 100-150 us with a WeakMap of hosts, 32 us without).
 */
const HOST = Symbol('runner.host');

/**
 * The host of the state `L` belongs to. The runtime's Lua-facing functions look their host up
 * here, at each call, instead of holding it: so a template's functions serve every state copied
 * from it, and what they do (output, files, the script that runs) is the calling state's.
 */
export function hostOf(L: LuaState): Host {
  const host = (globalOf(L) as GlobalState & { [HOST]?: Host })[HOST];
  if (host === undefined) throw new Error('internal error: a Lua state without a runtime host');
  return host;
}

/** A set of threads, kept as a mark on each thread (see above). A thread is in one state only. */
class ThreadMark {
  readonly #mark: symbol;

  constructor(name: string) {
    this.#mark = Symbol(name);
  }

  has(L: LuaState): boolean {
    return (L as unknown as Record<symbol, boolean | undefined>)[this.#mark] === true;
  }

  add(L: LuaState): void {
    (L as unknown as Record<symbol, boolean>)[this.#mark] = true;
  }

  delete(L: LuaState): void {
    // false rather than `delete`, which would turn the object's properties into a slow dictionary.
    if (this.has(L)) (L as unknown as Record<symbol, boolean>)[this.#mark] = false;
  }
}

const TASK_THREADS = new ThreadMark('runner.taskThread');
const SUSPENDED_BY_HOST = new ThreadMark('runner.suspendedByHost');

/** Handle given to JavaScript for a Lua function; only valid while its script runs. */
export class LuaFunctionHandle implements LuaFunctionRef {
  readonly kind = 'lua-function' as const;
  readonly host: Host;
  readonly exec: HostExecution;
  readonly proxy: LuaProxy;

  constructor(host: Host, exec: HostExecution, proxy: LuaProxy) {
    this.host = host;
    this.exec = exec;
    this.proxy = proxy;
  }

  call(...args: LuaValue[]): Promise<LuaValue[]> {
    return this.exec.callFunction(this.proxy, args);
  }
}

/** Log lines longer than this are split rather than held in memory without end. */
const MAX_LINE_BYTES = 64 * 1024;

/** stdout or stderr of a script: to a sink as written, or to the logger line by line. */
export class OutputStream {
  readonly #host: Host;
  readonly #which: 'stdout' | 'stderr';
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #decoder = new TextDecoder('utf-8');

  constructor(host: Host, which: 'stdout' | 'stderr') {
    this.#host = host;
    this.#which = which;
  }

  write(bytes: Uint8Array): void {
    const sink = this.#sink();
    if (sink) {
      const text = this.#decoder.decode(bytes, { stream: true });
      if (text) sink(text);
      return;
    }
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(10, start);
      if (nl < 0) break;
      this.#pending.push(bytes.subarray(start, nl));
      this.#emitPending();
      start = nl + 1;
    }
    if (start < bytes.length) {
      // Copy: the caller's array may be a view that changes.
      this.#pending.push(bytes.slice(start));
      this.#pendingBytes += bytes.length - start;
      if (this.#pendingBytes >= MAX_LINE_BYTES) this.#emitPending();
    }
  }

  /** Emits a partial last line (a script that ended with `io.write("no newline")`). */
  flush(): void {
    const sink = this.#sink();
    if (sink) {
      const rest = this.#decoder.decode();
      if (rest) sink(rest);
      return;
    }
    if (this.#pendingBytes > 0 || this.#pending.length > 0) this.#emitPending();
  }

  #sink(): ((text: string) => void) | undefined {
    const env = this.#host.environment;
    return this.#which === 'stdout' ? env.stdoutSink : env.stderrSink;
  }

  #emitPending(): void {
    let line = jsString(concatBytes(this.#pending));
    this.#pending = [];
    this.#pendingBytes = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const logger = this.#host.environment.logger;
    if (this.#which === 'stdout') logger.info(line, { stream: 'stdout' });
    else logger.warn(line, { stream: 'stderr' });
  }
}

/**
 * The message a JavaScript error becomes in Lua. V8's stack and memory RangeErrors get Lua's words
 * for them; the message is read defensively, since a getter that throws here would escape fengari's
 * error handling.
 */
export function describeJsError(error: unknown): string {
  let message: string;
  try {
    message = error instanceof Error ? error.message : String(error);
  } catch {
    return 'an error whose message cannot be read';
  }
  if (error instanceof RangeError && /call stack/i.test(message)) return 'stack overflow';
  if (isMemoryError(error)) return `not enough memory (${message})`;
  return message;
}

/** RangeErrors V8 throws when a table or string cannot grow. */
export function isMemoryError(error: unknown): boolean {
  return (
    error instanceof RangeError &&
    /Map maximum size|Invalid string length|Invalid array length|Array buffer allocation|Invalid typed array length/i.test(
      error.message,
    )
  );
}

function isLuaMultiple(value: unknown): value is { kind: 'lua-multiple'; values: LuaValue[] } {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'lua-multiple';
}

const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

/**
 * One Lua state with the standard library, the runtime's additions and every module installed,
 * plus the bookkeeping that lets its coroutines wait for JavaScript: which coroutine runs, why it
 * yielded, the files it opened, where its output goes.
 */
export class Host {
  readonly L: LuaState;
  readonly timeSlicer: TimeSlicer;
  /** The coroutine being resumed (null between resumes). */
  running: HostTask | null = null;
  /** Set just before a yield to the host; the resumer takes it. */
  pendingYield: HostYield | null = null;
  /** Coroutines the host created (scripts' main chunks, functions called from JavaScript). */
  readonly taskThreads = TASK_THREADS;
  /** Script coroutines suspended because something inside them waits for the host. */
  readonly suspendedByHost = SUSPENDED_BY_HOST;
  /** The last JavaScript error turned into a Lua error, to give the final LuaError its cause. */
  lastJsError: { message: string; error: unknown } | null = null;
  environment: HostEnvironment = {
    logger: silentLogger,
    dryRun: false,
    cwd: process.cwd(),
    env: process.env,
    stdin: new Uint8Array(0),
  };
  readonly stdout = new OutputStream(this, 'stdout');
  readonly stderr = new OutputStream(this, 'stderr');
  /** Files the script opened and has not closed; closed when the run ends. */
  readonly files = new Set<LuaFile>();
  /** io.stdin, io.stdout and io.stderr of this state. */
  readonly stdFiles: StdFiles;
  /** math.randomseed's generator state; undefined until a script seeds it (see lib-base.ts). */
  randomState: number | undefined = undefined;
  readonly pushOptions: PushOptions;

  constructor(options: HostOptions) {
    this.timeSlicer = options.timeSlicer;
    this.pushOptions = {
      pushFunctionRef: (L, ref, path) => {
        if (!(ref instanceof LuaFunctionHandle) || ref.host !== this) {
          throw new ConversionError(path, 'a Lua function of another script cannot be passed into this one');
        }
        ref.proxy(L);
      },
      pushJsFunction: (L, fn, path) => {
        lua.lua_pushjsfunction(
          L,
          this.wrapJs(path, (_exec, args) => fn(...args)),
        );
      },
    };

    this.stdFiles = createStdFiles(this);
    const template = options.template;
    const L =
      template === undefined
        ? buildState(options.modules, this.stdFiles)
        : copyState(template.L, (data) => {
            // The standard files of the copy are this host's (they write to its output).
            const file = data.file as LuaFile | undefined;
            if (file === template.stdFiles.stdin) data.file = this.stdFiles.stdin;
            else if (file === template.stdFiles.stdout) data.file = this.stdFiles.stdout;
            else if (file === template.stdFiles.stderr) data.file = this.stdFiles.stderr;
            else throw new Error('internal error: a template holds a file that is not a standard one');
            return data;
          });
    this.L = L;
    (globalOf(L) as GlobalState & { [HOST]?: Host })[HOST] = this;
    // Called by `..` before it allocates, where fengari is built with fengari-patch.mjs.
    (globalOf(L) as GlobalState & { runnerConcatCheck?: unknown }).runnerConcatCheck = checkConcatSize;
    lua.lua_atnativeerror(L, this.#onNativeError);
    // Set on the main thread: every coroutine (the host's and the script's) inherits it.
    lua.lua_sethook(L, this.#hook, lua.LUA_MASKCOUNT, options.hookInstructions);
  }

  /** Whether the value at `idx` is this state's handler of JavaScript errors (see Execution's #luaError). */
  isNativeErrorHandler(L1: LuaState, idx: number): boolean {
    return lua.lua_tocfunction(L1, idx) === this.#onNativeError;
  }

  readonly #onNativeError = (L1: LuaState): number => {
    const error: unknown = lua.lua_touserdata(L1, -1);
    const message = describeJsError(error);
    this.lastJsError = { message, error };
    lua.lua_pushstring(L1, luaString(message));
    return 1;
  };

  configure(environment: HostEnvironment): void {
    this.environment = environment;
  }

  /** Flushes output and closes the files the script left open. */
  release(): void {
    this.stdout.flush();
    this.stderr.flush();
    for (const file of this.files) file.closeQuietly();
    this.files.clear();
  }

  /** True while the running coroutine's script is being stopped: `pcall` must not swallow that. */
  stopping(): boolean {
    return this.running !== null && this.running.exec.stopError !== null;
  }

  /** A new coroutine for the host to run a function in; the caller pushes the function. */
  newTaskThread(): LuaState {
    const thread = lua.lua_newthread(this.L);
    lua.lua_pop(this.L, 1);
    this.taskThreads.add(thread);
    return thread;
  }

  /** Raises a Lua error with `message`, prefixed with the calling line as luaL_error does. */
  raise(L: LuaState, message: string, withPosition = true): never {
    if (withPosition) {
      lauxlib.luaL_where(L, 1);
      lua.lua_pushstring(L, luaString(message));
      lua.lua_concat(L, 2);
    } else {
      lua.lua_pushstring(L, luaString(message));
    }
    return lua.lua_error(L);
  }

  /** Raises a JavaScript error as a Lua error whose value is exactly the error's message. */
  raiseJsError(L: LuaState, error: unknown): never {
    const message = describeJsError(error);
    this.lastJsError = { message, error };
    lua.lua_pushstring(L, luaString(message));
    return lua.lua_error(L);
  }

  /**
   * Suspends the calling coroutine until `promise` settles, then returns what `push` pushes (or
   * raises the rejection). Only the calling coroutine waits: the host resumes others meanwhile.
   * Call as `return host.suspend(...)` from a Lua-facing function.
   */
  suspend<T>(L: LuaState, what: string, promise: PromiseLike<T>, push: (L: LuaState, value: T) => number): number {
    if (!lua.lua_isyieldable(L)) {
      // Nobody will await it; a rejection must not become an unhandled one.
      Promise.resolve(promise).catch(() => {});
      return this.raise(
        L,
        `${what} has to wait, which is not possible here (inside a sort comparator, a gsub callback, a __tostring or __pairs metamethod, or a chunk run by require)`,
      );
    }
    const record: AwaitRecord<T> = { what, promise, ok: false, push };
    this.pendingYield = record;
    return lua.lua_yieldk(L, 0, record, this.#continueAfterAwait);
  }

  readonly #continueAfterAwait = (L: LuaState, _status: number, record: AwaitRecord<any>): number => {
    if (!record.ok) return this.raiseJsError(L, record.error);
    return record.push(L, record.value);
  };

  /** Pushes a JavaScript value, raising a Lua error that names `what` when it cannot be converted. */
  pushValue(L: LuaState, value: unknown, what: string): void {
    try {
      pushJs(L, value, this.pushOptions, what);
    } catch (error) {
      if (error instanceof ConversionError) this.raise(L, `${what} cannot be given to Lua: ${error.message}`);
      throw error;
    }
  }

  /**
   * A Lua-callable function around a JavaScript one: arguments converted to JavaScript, a returned
   * promise awaited without blocking other scripts, a thrown error raised as a Lua error.
   */
  wrapJs(name: string, invoke: (exec: HostExecution, args: LuaValue[]) => unknown): LuaJsFunction {
    return wrapJs(name, invoke);
  }

  /**
   * The count hook: stops a script past its deadline, and ends the coroutine's turn when the slice
   * is spent. Yielding needs a yieldable context; where there is none (a sort comparator, a
   * metamethod) a stop is raised as an error instead, again at every hook, and `pcall` passes it on.
   */
  readonly #hook = (L: LuaState): void => {
    const task = this.running;
    if (task === null) return;
    const exec = task.exec;
    const now = performance.now();
    if (exec.stopError === null) exec.checkDeadline(now);
    if (exec.stopError === null && this.timeSlicer.heapGuard !== null && this.timeSlicer.expired(now)) {
      const full = this.timeSlicer.heapGuard.check(now);
      if (full !== null) exec.stop(new LuaError(`${exec.prefix}${full}`));
    }
    if (exec.stopError !== null) {
      if (lua.lua_isyieldable(L)) {
        exec.notePosition(task, L);
        this.pendingYield = STOP;
        lua.lua_yield(L, 0);
        return;
      }
      this.raise(L, exec.stopError.message, false);
    }
    if (this.timeSlicer.expired(now) && lua.lua_isyieldable(L)) {
      exec.notePosition(task, L);
      this.pendingYield = SLICE;
      lua.lua_yield(L, 0);
    }
  };
}

/** See Host.wrapJs. The function finds its host from the state it is called in. */
function wrapJs(name: string, invoke: (exec: HostExecution, args: LuaValue[]) => unknown): LuaJsFunction {
  return (L) => {
    const host = hostOf(L);
    const exec = host.running?.exec;
    if (exec === undefined) return host.raise(L, `${name} cannot be called outside a running script`);
    const n = lua.lua_gettop(L);
    const args: LuaValue[] = new Array(n);
    for (let i = 0; i < n; i++) {
      try {
        args[i] = toJs(L, i + 1, exec.toJsOptions, `argument #${i + 1}`);
      } catch (error) {
        if (error instanceof ConversionError) host.raise(L, `bad argument #${i + 1} to '${name}' (${error.message})`);
        throw error;
      }
    }
    let result: unknown;
    try {
      result = invoke(exec, args);
    } catch (error) {
      return host.raiseJsError(L, error);
    }
    if (isThenable(result))
      return host.suspend(L, name, result, (L1: LuaState, value: unknown) => pushReturn(host, L1, value, name));
    return pushReturn(host, L, result, name);
  };
}

function pushReturn(host: Host, L: LuaState, value: unknown, name: string): number {
  if (value === undefined) return 0;
  if (isLuaMultiple(value)) {
    lauxlib.luaL_checkstack(L, value.values.length + 1, luaString(`too many results from ${name}`));
    for (let i = 0; i < value.values.length; i++) host.pushValue(L, value.values[i], `result #${i + 1} of ${name}`);
    return value.values.length;
  }
  host.pushValue(L, value, `the result of ${name}`);
  return 1;
}

const STANDARD_LIBRARIES: readonly [string, LuaJsFunction][] = [
  ['_G', lualib.luaopen_base],
  ['package', lualib.luaopen_package],
  ['coroutine', lualib.luaopen_coroutine],
  ['table', lualib.luaopen_table],
  ['string', lualib.luaopen_string],
  ['math', lualib.luaopen_math],
  ['utf8', lualib.luaopen_utf8],
  ['os', lualib.luaopen_os],
  ['debug', lualib.luaopen_debug],
];

/** A state built through the API: the standard library, the runtime's changes, every module. */
function buildState(modules: readonly RegisteredModule[], stdFiles: StdFiles): LuaState {
  const L = lauxlib.luaL_newstate();
  for (const [name, open] of STANDARD_LIBRARIES) {
    lauxlib.luaL_requiref(L, luaString(name), open, 1);
    lua.lua_pop(L, 1);
  }
  installBaseLibrary(L);
  installIoLibrary(L, stdFiles);
  installOsLibrary(L);
  installStringLimits(L);
  installModulesOnFirstUse(L, modules);
  return L;
}

/** The registry field holding `_G`'s metatable of module tables made on first use. */
const MODULES_ON_FIRST_USE = luaString('runner.modules_on_first_use');
const ASSIGNED = luaString('assigned');

/**
 * Module tables are made in a state at a script's first use of their name (`_G`'s `__index`), not
 * up front: every run's state is a copy of the template, and with forty modules the copy of their
 * tables (and the garbage it left) cost a two-task run more CPU than its own work. A script sees
 * no difference: a module global it assigns (even nil) stays as assigned, `getmetatable(_G)` is
 * nil, `setmetatable(_G, mt)` makes every module first; only `pairs(_G)` lists just the modules
 * used so far.
 */
function installModulesOnFirstUse(L: LuaState, modules: readonly RegisteredModule[]): void {
  if (modules.length === 0) return;
  const byName = new Map(modules.map((module) => [module.spec.name, module]));
  const moduleAt = (L1: LuaState, idx: number) =>
    lua.lua_type(L1, idx) === lua.LUA_TSTRING ? byName.get(jsString(lua.lua_tostring(L1, idx)!)) : undefined;
  lua.lua_pushglobaltable(L);
  lua.lua_createtable(L, 0, 3);
  lua.lua_createtable(L, 0, 0);
  lua.lua_setfield(L, -2, ASSIGNED);
  // __index(globals, name): a module not made yet, unless the script assigned its name.
  lua.lua_pushjsfunction(L, (L1: LuaState) => {
    const module = moduleAt(L1, 2);
    if (module === undefined || assignedByScript(L1)) return 0;
    lua.lua_settop(L1, 2);
    lua.lua_pushvalue(L1, 2);
    moduleTable(L1, module);
    lua.lua_rawset(L1, 1);
    lua.lua_rawget(L1, 1);
    return 1;
  });
  lua.lua_setfield(L, -2, luaString('__index'));
  // __newindex(globals, name, value): only for names not set yet; a module's name is noted.
  lua.lua_pushjsfunction(L, (L1: LuaState) => {
    lua.lua_settop(L1, 3);
    if (moduleAt(L1, 2) !== undefined && lua.lua_getmetatable(L1, 1)) {
      lua.lua_getfield(L1, -1, ASSIGNED);
      lua.lua_pushvalue(L1, 2);
      lua.lua_pushboolean(L1, true);
      lua.lua_rawset(L1, -3);
      lua.lua_settop(L1, 3);
    }
    lua.lua_rawset(L1, 1);
    return 0;
  });
  lua.lua_setfield(L, -2, luaString('__newindex'));
  lua.lua_pushvalue(L, -1);
  lua.lua_setfield(L, lua.LUA_REGISTRYINDEX, MODULES_ON_FIRST_USE);
  lua.lua_setmetatable(L, -2);
  lua.lua_pop(L, 1);
  hideModulesMetatable(L, [...byName.keys()]);
}

/** Whether the module name at index 2 was assigned by the script (the globals table at index 1). */
function assignedByScript(L1: LuaState): boolean {
  if (!lua.lua_getmetatable(L1, 1)) return false;
  lua.lua_getfield(L1, -1, ASSIGNED);
  lua.lua_pushvalue(L1, 2);
  lua.lua_rawget(L1, -2);
  const assigned = lua.lua_toboolean(L1, -1);
  lua.lua_pop(L1, 3);
  return assigned;
}

/** Whether the value at `idx` has the modules' metatable (`_G` before a script replaced it). */
function hasModulesMetatable(L1: LuaState, idx: number): boolean {
  if (!lua.lua_getmetatable(L1, idx)) return false;
  lua.lua_getfield(L1, lua.LUA_REGISTRYINDEX, MODULES_ON_FIRST_USE);
  const same = lua.lua_rawequal(L1, -1, -2);
  lua.lua_pop(L1, 2);
  return same;
}

/** getmetatable(_G) answers nil, and setmetatable(_G, mt) first makes every module not made yet. */
function hideModulesMetatable(L: LuaState, names: readonly string[]): void {
  const original = (name: string) => {
    lua.lua_getglobal(L, luaString(name));
    const fn = lua.lua_tocfunction(L, -1)!;
    lua.lua_pop(L, 1);
    return fn;
  };
  const getmetatable = original('getmetatable');
  const setmetatable = original('setmetatable');
  lua.lua_pushjsfunction(L, (L1: LuaState) => {
    if (!hasModulesMetatable(L1, 1)) return getmetatable(L1);
    lua.lua_pushnil(L1);
    return 1;
  });
  lua.lua_setglobal(L, luaString('getmetatable'));
  lua.lua_pushjsfunction(L, (L1: LuaState) => {
    if (hasModulesMetatable(L1, 1))
      for (const name of names) {
        lua.lua_getfield(L1, 1, luaString(name));
        lua.lua_pop(L1, 1);
      }
    return setmetatable(L1);
  });
  lua.lua_setglobal(L, luaString('setmetatable'));
}

/** Pushes a new table of the module's functions. */
function moduleTable(L: LuaState, module: RegisteredModule): void {
  lua.lua_createtable(L, 0, module.functions.size);
  for (const [fnName, fn] of module.functions) {
    const qualified = `${module.spec.name}.${fnName}`;
    lua.lua_pushjsfunction(
      L,
      wrapJs(qualified, (exec, args) => (fn as ModuleFunction)(exec.context, ...args)),
    );
    lua.lua_setfield(L, -2, luaString(fnName));
  }
}
