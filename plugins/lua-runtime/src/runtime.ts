import {
  InvalidInputError,
  RunnerError,
  type LuaEnvironmentOptions,
  type LuaEvalOptions,
  type LuaRunOptions,
  type LuaRunResult,
  type LuaRuntime,
  type LuaSession,
  type LuaSessionOptions,
  type LuaValue,
} from '@runner/plugin-sdk';
import fengari, { type LuaState } from 'fengari';
import { ConversionError, pushJs } from './convert.js';
import { Execution } from './execution.js';
import { HeapGuard } from './heap-guard.js';
import { Host, type HostEnvironment } from './host.js';
import { jsString, luaString } from './lua-strings.js';
import type { ModuleRegistry } from './module-registry.js';
import { TimeSlicer } from './time-slicer.js';
import { chunkRules, classifyChunk, leavesNoTrace, type ChunkRules, type Proto } from './script-bounds.js';
import { UncopyableStateError } from './state-copy.js';

const { lua, lauxlib } = fengari;

export interface LuaRuntimeOptions {
  /** Lua time per turn of the event loop, shared by all scripts (ms). Default 5. */
  sliceMs?: number;
  /** States built ahead of time so that a run does not wait for one. Default 2; 0 builds on demand. */
  poolSize?: number;
  /** VM instructions between two checks of the slice and the deadline. Default 1000. */
  hookInstructions?: number;
  /**
   * Share of V8's heap limit past which a script that uses up its slice is stopped (heap-guard.ts).
   * Default 0.7; 0 turns the guard off.
   */
  heapGuardRatio?: number;
  /**
   * In a Lua worker (worker-entry.ts): the heap guard also stops a script once the worker's heap and
   * buffers hold this many bytes, reporting `memory limit of ... exceeded`.
   */
  memoryLimitBytes?: number;
}

const TEXT_ONLY = luaString('t');

/**
 * The Lua runtime: every run gets a Lua state of its own, fresh from the standard library and the
 * modules, and drops it afterwards, so that nothing a script does (globals, library tables,
 * metatables, package.loaded, the registry) can reach another run.
 *
 * Building a state through the API costs about 0.5 ms (and as much again in garbage collection),
 * which was most of a trivial task's cost. So one state, the template, is built that way and never
 * runs anything; every run gets a copy of it, made object by object in about a twentieth of the
 * time (state-copy.ts says why a copy is as fresh as a built state). A small pool keeps copies
 * ready: a run takes one, and the pool refills from setImmediate, outside the run's path.
 *
 * A script that can leave nothing behind in its state (side-effect free, setting no global:
 * script-bounds' leavesNoTrace) skips even the copy: it runs in a state kept for such scripts,
 * whose run's globals are cleared after it, as a fresh state would have none of them. A trivial
 * hook (`return true`) or a task that only returns values costs a tenth of a copy that way. Such a
 * run that finds the kept state taken waits for it instead of copying one (a batch of hooks started
 * in one turn then runs one after another in it), and the kept state keeps the chunks it loaded
 * (loadKept), so a hook run again is not compiled again.
 */
/** sideEffectFree verdicts kept, by source text; past this the cache starts over. */
const PURE_CACHE_LIMIT = 4096;

export class LuaRuntimeService implements LuaRuntime {
  readonly #registry: ModuleRegistry;
  readonly #timeSlicer: TimeSlicer;
  readonly #poolSize: number;
  readonly #hookInstructions: number;
  #pool: Host[] = [];
  /** Built on first need; null when states cannot be copied (they are then built one by one). */
  #template: Host | null | undefined = undefined;
  #refillPending = false;
  #closed = false;
  #compiler: LuaState | null = null;
  readonly #executions = new Set<Execution>();
  readonly #sessions = new Set<Session>();
  readonly #unsubscribe: () => void;
  /** sideEffectFree's verdicts by source text, and the rules they were read with (no module callable). */
  readonly #pure = new Map<string, boolean>();
  #pureRules: ChunkRules | null = null;
  /** Whether a script may run in a state used before, by source text (see the class's comment). */
  readonly #traceless = new Map<string, boolean>();
  /** The state kept for such scripts while no run uses it. */
  #reusable: Host | null = null;
  /** A run holds the kept state (or is being handed it). */
  #keptTaken = false;
  /** Runs waiting for the kept state, in the order they came; each is given its state. */
  readonly #waiting: ((host: Host | undefined, reused: boolean) => void)[] = [];
  #statesMade = 0;

  constructor(registry: ModuleRegistry, options: LuaRuntimeOptions = {}) {
    this.#registry = registry;
    const heapGuardRatio = options.heapGuardRatio ?? 0.7;
    const guarded = heapGuardRatio > 0 || options.memoryLimitBytes !== undefined;
    this.#timeSlicer = new TimeSlicer(
      options.sliceMs ?? 5,
      guarded ? new HeapGuard(heapGuardRatio > 0 ? heapGuardRatio : 1, 20, options.memoryLimitBytes) : null,
    );
    this.#poolSize = options.poolSize ?? 2;
    this.#hookInstructions = options.hookInstructions ?? 1000;
    // A state built before a module was provided lacks it.
    this.#unsubscribe = registry.onChange(() => {
      this.#pool = [];
      this.#template = undefined;
      this.#pureRules = null;
      this.#pure.clear();
      this.#traceless.clear();
      this.#reusable = null;
    });
  }

  /**
   * Proven to touch nothing outside its state: script-bounds' proof with no module callable, so
   * the only calls reach BOUNDED_LIBRARY (none of which opens a file, starts a process or reads
   * the network), and no other global of the library (`io`, `os.execute`, `require`, `load`) is
   * read. Cached per source text, as `auto`'s placement is.
   */
  sideEffectFree(source: string): boolean {
    let pure = this.#pure.get(source);
    if (pure === undefined) {
      this.#pureRules ??= chunkRules([], this.globalNames());
      try {
        pure = classifyChunk(this.chunkProto(source, 'script'), this.#pureRules).bounded;
      } catch {
        pure = false;
      }
      if (this.#pure.size >= PURE_CACHE_LIMIT) this.#pure.clear();
      this.#pure.set(source, pure);
    }
    return pure;
  }

  /**
   * Whether `source` run with `globals` may take the kept state: it leaves no trace, and the run's
   * globals are not names the fresh state holds (clearing them afterwards would remove those).
   */
  #mayReuse(source: string, globals: Record<string, unknown> | undefined): boolean {
    let traceless = this.#traceless.get(source);
    if (traceless === undefined) {
      traceless = this.sideEffectFree(source) && leavesNoTrace(this.chunkProto(source, 'script'));
      if (this.#traceless.size >= PURE_CACHE_LIMIT) this.#traceless.clear();
      this.#traceless.set(source, traceless);
    }
    if (!traceless) return false;
    const initial = this.#pureRules!.initialGlobals;
    for (const name in globals) if (initial.has(name)) return false;
    return true;
  }

  /**
   * Gives the kept state back once the run that took it ended, its run's globals cleared: to the
   * next waiting run, from a microtask (a chain of trivial runs must not nest their calls), or kept.
   */
  #keep(host: Host, globals: Record<string, unknown> | undefined): void {
    host.release();
    const L = host.L;
    for (const name in globals) {
      lua.lua_pushnil(L);
      lua.lua_setglobal(L, luaString(name));
    }
    host.lastJsError = null;
    if (this.#waiting.length > 0) queueMicrotask(() => this.#handOff(host));
    else this.#handOff(host);
  }

  /** The kept state (undefined: a fresh one) to the next waiting run, or kept for the next run. */
  #handOff(host: Host | undefined): void {
    const next = this.#waiting.shift();
    if (next !== undefined) {
      next(this.#closed ? undefined : (host ?? this.#takeHost()), true);
      return;
    }
    this.#keptTaken = false;
    if (!this.#closed && host !== undefined) this.#reusable = host;
  }

  /** The kept state's run paused before its end (a long script): the runs waiting for it take copies. */
  #spill(): void {
    for (const next of this.#waiting.splice(0)) next(this.#closed ? undefined : this.#takeHost(), false);
  }

  compile(source: string, chunkName: string): void {
    this.chunkProto(source, chunkName);
  }

  /** Compiles `source` and gives its main function's prototype (fengari's Proto: its bytecode). */
  chunkProto(source: string, chunkName: string): Proto {
    const L = (this.#compiler ??= lauxlib.luaL_newstate());
    const bytes = luaString(source);
    const name = /^[=@]/.test(chunkName) ? chunkName : `=${chunkName}`;
    const status = lauxlib.luaL_loadbufferx(L, bytes, bytes.length, luaString(name), TEXT_ONLY);
    const message = status === lua.LUA_OK ? '' : jsString(lua.lua_tostring(L, -1) ?? new Uint8Array(0));
    // fengari's lua_State is a plain object: the loaded closure is the value on top of its stack.
    const internal = L as unknown as { stack: { value: { p: Proto } }[]; top: number };
    const proto = status === lua.LUA_OK ? internal.stack[internal.top - 1].value.p : null;
    lua.lua_settop(L, 0);
    if (proto === null) throw syntaxError(message, source);
    return proto;
  }

  /** The names of the globals of a fresh state: the standard library's and the modules'. */
  globalNames(): string[] {
    const host = this.#createHost();
    try {
      const L = host.L;
      const names: string[] = [];
      lua.lua_pushglobaltable(L);
      lua.lua_pushnil(L);
      while (lua.lua_next(L, -2) !== 0) {
        if (lua.lua_type(L, -2) === lua.LUA_TSTRING) names.push(jsString(lua.lua_tostring(L, -2)!));
        lua.lua_pop(L, 1);
      }
      lua.lua_pop(L, 1);
      // Module tables are made on first use (host.ts): their names are globals all the same.
      for (const module of this.#registry.modules())
        if (!names.includes(module.spec.name)) names.push(module.spec.name);
      return names;
    } finally {
      host.release();
    }
  }

  run(source: string, options: LuaRunOptions): Promise<LuaRunResult> {
    if (this.#closed) return Promise.reject(stoppedError());
    if (!this.#mayReuse(source, options.globals)) return this.#start(source, options, this.#takeHost(), false);
    if (!this.#keptTaken) {
      this.#keptTaken = true;
      const kept = this.#reusable ?? this.#takeHost();
      this.#reusable = null;
      return this.#start(source, options, kept, true);
    }
    // The kept state is taken, most often by a run queued for the next slice (a batch of hooks
    // started in one turn after its slice ran out): this run waits for it rather than copying a
    // state now. Runs waiting when the holder pauses (a long script) take copies then (#spill).
    return new Promise((resolve, reject) => {
      this.#waiting.push((host, reused) =>
        host === undefined ? reject(stoppedError()) : this.#start(source, options, host, reused).then(resolve, reject),
      );
    });
  }

  /** Runs `source` in `host`; `reused`: the host is (or becomes) the kept state, given back at the end. */
  #start(source: string, options: LuaRunOptions, host: Host, reused: boolean): Promise<LuaRunResult> {
    const prefix = options.run === undefined ? '' : `task ${options.run.task}: `;
    // Given back once: as the script ends (onEnd), or as its promise settles when it never started.
    let given = false;
    const giveBack = (): void => {
      if (given) return;
      given = true;
      this.#keep(host, options.globals);
    };
    host.configure(environmentOf(options));
    let exec: Execution;
    let thread: LuaState;
    try {
      setGlobals(host, options);
      thread = host.newTaskThread();
      const status = reused
        ? loadKept(host, thread, source, options.chunkName)
        : loadChunk(thread, source, options.chunkName);
      if (status !== lua.LUA_OK) {
        lua.lua_settop(thread, 0);
        // Reported as compile() reports it, so the validator and a run say the same thing.
        try {
          this.compile(source, options.chunkName);
        } catch (error) {
          if (error instanceof InvalidInputError)
            throw new InvalidInputError(`${prefix}${error.message}`, { details: error.details });
          throw error;
        }
        throw new InvalidInputError(`${prefix}${options.chunkName}: the script does not load`);
      }
      exec = new Execution({
        host,
        context: { dryRun: options.dryRun ?? false, logger: options.logger, run: options.run },
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        chunkName: options.chunkName,
        prefix,
        lenient: false,
        // Given back as the script ends: runs started in the same turn (a batch of hooks) then take
        // it one after another instead of each copying a state.
        onEnd: reused ? giveBack : undefined,
        onPause: reused ? () => this.#spill() : undefined,
      });
    } catch (error) {
      // A state whose run failed to start is not kept: what the failure left in it is unknown.
      host.release();
      if (reused) this.#handOff(undefined);
      return Promise.reject(error);
    }
    this.#executions.add(exec);
    const finish = (): void => {
      this.#executions.delete(exec);
      if (reused) giveBack();
      else host.release();
    };
    return exec.start(thread, 0).then(
      (values) => {
        finish();
        return { values };
      },
      (error: unknown) => {
        finish();
        throw error;
      },
    );
  }

  createSession(options: LuaSessionOptions): LuaSession {
    if (this.#closed) throw stoppedError();
    const host = this.#createHost();
    host.configure(environmentOf(options));
    setGlobals(host, options);
    const session = new Session(host, options, () => this.#sessions.delete(session));
    this.#sessions.add(session);
    return session;
  }

  /** Stops every run and session; later calls fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    this.#pool = [];
    this.#template = undefined;
    this.#reusable = null;
    this.#spill();
    for (const exec of [...this.#executions]) exec.stop(stoppedError());
    for (const session of [...this.#sessions]) session.close();
  }

  #createHost(): Host {
    this.#statesMade += 1;
    if (this.#template === undefined) {
      const template = this.#buildHost();
      try {
        // One copy made here proves the template copyable (it holds nothing state-copy refuses).
        new Host({ modules: [], timeSlicer: this.#timeSlicer, hookInstructions: this.#hookInstructions, template });
        this.#template = template;
      } catch (error) {
        if (!(error instanceof UncopyableStateError)) throw error;
        this.#template = null;
      }
    }
    if (this.#template === null) return this.#buildHost();
    return new Host({
      modules: [],
      timeSlicer: this.#timeSlicer,
      hookInstructions: this.#hookInstructions,
      template: this.#template,
    });
  }

  /** States copied (or built) for runs so far: what the kept state saves shows here (tests, benches). */
  get statesMade(): number {
    return this.#statesMade;
  }

  #buildHost(): Host {
    return new Host({
      modules: this.#registry.modules(),
      timeSlicer: this.#timeSlicer,
      hookInstructions: this.#hookInstructions,
    });
  }

  #takeHost(): Host {
    const host = this.#pool.pop() ?? this.#createHost();
    this.#scheduleRefill();
    return host;
  }

  #scheduleRefill(): void {
    if (this.#refillPending || this.#closed || this.#pool.length >= this.#poolSize) return;
    this.#refillPending = true;
    // One state per turn: building one takes a fraction of a millisecond, several would add up.
    setImmediate(() => {
      this.#refillPending = false;
      if (this.#closed || this.#pool.length >= this.#poolSize) return;
      this.#pool.push(this.#createHost());
      this.#scheduleRefill();
    }).unref();
  }
}

class Session implements LuaSession {
  readonly #host: Host;
  readonly #options: LuaSessionOptions;
  readonly #chunkName: string;
  readonly #onClose: () => void;
  #queue: Promise<unknown> = Promise.resolve();
  #current: Execution | null = null;
  #closed = false;

  constructor(host: Host, options: LuaSessionOptions, onClose: () => void) {
    this.#host = host;
    this.#options = options;
    const name = options.chunkName ?? 'stdin';
    this.#chunkName = /^[=@]/.test(name) ? name : `=${name}`;
    this.#onClose = onClose;
  }

  get closed(): boolean {
    return this.#closed;
  }

  eval(source: string, options: LuaEvalOptions = {}): Promise<LuaValue[]> {
    const result = this.#queue.then(() => this.#eval(source, options));
    this.#queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#current?.stop(new RunnerError('cancelled', 'the Lua session was closed', { status: 409 }));
    this.#host.release();
    this.#onClose();
  }

  async #eval(source: string, options: LuaEvalOptions): Promise<LuaValue[]> {
    if (this.#closed) throw new RunnerError('cancelled', 'the Lua session is closed', { status: 409 });
    const host = this.#host;
    const thread = host.newTaskThread();
    const name = luaString(this.#chunkName);
    // As the lua REPL: an expression is shown, so try it as `return <source>` first.
    const asExpression = luaString(`return ${source}`);
    if (lauxlib.luaL_loadbufferx(thread, asExpression, asExpression.length, name, TEXT_ONLY) !== lua.LUA_OK) {
      lua.lua_settop(thread, 0);
      const bytes = luaString(source);
      if (lauxlib.luaL_loadbufferx(thread, bytes, bytes.length, name, TEXT_ONLY) !== lua.LUA_OK) {
        const message = jsString(lua.lua_tostring(thread, -1) ?? new Uint8Array(0));
        lua.lua_settop(thread, 0);
        throw syntaxError(message, source);
      }
    }
    const exec = new Execution({
      host,
      context: { dryRun: this.#options.dryRun ?? false, logger: this.#options.logger },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      chunkName: this.#chunkName,
      prefix: '',
      lenient: true,
    });
    this.#current = exec;
    try {
      return await exec.start(thread, 0);
    } finally {
      this.#current = null;
    }
  }
}

function stoppedError(): RunnerError {
  return new RunnerError('unavailable', 'the Lua runtime has stopped', { status: 503 });
}

function environmentOf(options: LuaEnvironmentOptions): HostEnvironment {
  const stdin = options.io?.stdin;
  return {
    logger: options.logger,
    dryRun: options.dryRun ?? false,
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? process.env,
    stdin:
      stdin === undefined ? new Uint8Array(0) : typeof stdin === 'string' ? luaString(stdin) : new Uint8Array(stdin),
    stdoutSink: options.io?.stdout,
    stderrSink: options.io?.stderr,
    memoryLimitBytes: options.memoryLimitBytes,
  };
}

function setGlobals(host: Host, options: LuaEnvironmentOptions): void {
  const L = host.L;
  const globals = options.globals ?? {};
  for (const [name, value] of Object.entries(globals)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new InvalidInputError(`global "${name}" is not a Lua identifier`, { field: `globals.${name}` });
    }
    try {
      pushJs(L, value, host.pushOptions, `globals.${name}`);
    } catch (error) {
      if (error instanceof ConversionError) throw new InvalidInputError(error.message, { field: error.path });
      throw error;
    }
    lua.lua_setglobal(L, luaString(name));
  }
  if (!Object.prototype.hasOwnProperty.call(globals, 'dry_run')) {
    lua.lua_pushboolean(L, options.dryRun ?? false);
    lua.lua_setglobal(L, luaString('dry_run'));
  }
}

function loadChunk(thread: LuaState, source: string, chunkName: string): number {
  const bytes = luaString(source);
  return lauxlib.luaL_loadbufferx(thread, bytes, bytes.length, luaString(chunkName), TEXT_ONLY);
}

/** Chunks a kept state holds loaded, by name and source; past this it starts over. */
const KEPT_CHUNKS = 64;
const keptChunks = new WeakMap<Host, Map<string, number>>();

/**
 * Pushes the chunk as loaded once before in this kept state (its registry holds the function), or
 * loads it and keeps it. Safe to call again: a script that leaves no trace never assigns to its
 * upvalue `_ENV`, so the function is as its load made it; the closures a run makes are its own.
 */
function loadKept(host: Host, thread: LuaState, source: string, chunkName: string): number {
  let chunks = keptChunks.get(host);
  if (chunks === undefined) keptChunks.set(host, (chunks = new Map()));
  const key = `${chunkName}\0${source}`;
  const ref = chunks.get(key);
  if (ref !== undefined) {
    lua.lua_rawgeti(thread, lua.LUA_REGISTRYINDEX, ref);
    return lua.LUA_OK;
  }
  const status = loadChunk(thread, source, chunkName);
  if (status !== lua.LUA_OK) return status;
  if (chunks.size >= KEPT_CHUNKS) {
    for (const old of chunks.values()) lauxlib.luaL_unref(thread, lua.LUA_REGISTRYINDEX, old);
    chunks.clear();
  }
  lua.lua_pushvalue(thread, -1);
  chunks.set(key, lauxlib.luaL_ref(thread, lua.LUA_REGISTRYINDEX));
  return status;
}

/** A load error as an InvalidInputError with the line (and column, when the token is found). */
export function syntaxError(message: string, source: string): InvalidInputError {
  const position = /^(.*?):(\d+): (.*)$/s.exec(message);
  if (position === null) return new InvalidInputError(message, { details: { incomplete: false } });
  const line = Number(position[2]);
  const text = position[3];
  const incomplete = text.endsWith('<eof>');
  const details: Record<string, unknown> = { line, incomplete };
  // Lua reports no column; the token it names gives one when it occurs once on the line.
  const near = /near '(.+)'$/s.exec(text);
  if (near !== null) {
    const lineText = source.split('\n')[line - 1] ?? '';
    const at = lineText.indexOf(near[1]);
    if (at >= 0 && lineText.indexOf(near[1], at + 1) < 0) details.column = at + 1;
  }
  return new InvalidInputError(message, { details });
}
