import {
  ConflictError,
  functionSpecProblem,
  LuaError,
  SCRIPT_GLOBALS,
  type LuaFunctionRef,
  type LuaValue,
  type LuaModuleImplementation,
  type LuaModules,
  type LuaModuleSpec,
} from '@runner/plugin-sdk';

/** A module function as the runtime calls it. */
export type ModuleFunction = (...args: any[]) => unknown;

export interface RegisteredModule {
  spec: LuaModuleSpec;
  functions: ReadonlyMap<string, ModuleFunction>;
}

/**
 * Names a module may not take: the standard library's globals and the globals every task script
 * reads (workflow-language.md, "A task's script"). A module under one of them would hide it.
 */
export const RESERVED_GLOBALS: ReadonlySet<string> = new Set([
  // Lua 5.3 base library and library tables.
  'assert',
  'collectgarbage',
  'dofile',
  'error',
  'getmetatable',
  'ipairs',
  'load',
  'loadfile',
  'next',
  'pairs',
  'pcall',
  'print',
  'rawequal',
  'rawget',
  'rawlen',
  'rawset',
  'require',
  'select',
  'setmetatable',
  'tonumber',
  'tostring',
  'type',
  'xpcall',
  'coroutine',
  'debug',
  'io',
  'math',
  'os',
  'package',
  'string',
  'table',
  'utf8',
  // The script's own globals.
  ...SCRIPT_GLOBALS,
]);

/** The `LuaModules` service: modules that plugins provide, installed as globals in every new state. */
export class ModuleRegistry implements LuaModules {
  readonly #modules = new Map<string, RegisteredModule>();
  readonly #listeners = new Set<() => void>();

  provide<F extends string>(spec: LuaModuleSpec<F>, implementation: LuaModuleImplementation<F>): void {
    if (RESERVED_GLOBALS.has(spec.name)) {
      throw new ConflictError(`Lua module "${spec.name}": the name is a global of every script; pick another`);
    }
    if (this.#modules.has(spec.name)) {
      throw new ConflictError(`Lua module "${spec.name}" is already provided`);
    }
    const functions = new Map<string, ModuleFunction>();
    for (const [name, declared] of Object.entries(spec.functions)) {
      // A spec made without defineLuaModule is checked here: placement reads these properties.
      const problem = functionSpecProblem(declared);
      if (problem) throw new TypeError(`Lua module "${spec.name}": function "${name}" ${problem}`);
      const fn = (implementation as Record<string, unknown>)[name];
      if (typeof fn !== 'function') {
        throw new TypeError(`Lua module "${spec.name}": function "${name}" is declared but not implemented`);
      }
      functions.set(
        name,
        (declared as { callsLua: boolean }).callsLua
          ? (fn as ModuleFunction)
          : holdToNoCallbacks(`${spec.name}.${name}`, fn as ModuleFunction),
      );
    }
    // An undeclared function would work but be missing from `runner modules info`.
    for (const name of Object.keys(implementation)) {
      if (!functions.has(name)) {
        throw new TypeError(
          `Lua module "${spec.name}": function "${name}" is implemented but not declared in its spec`,
        );
      }
    }
    this.#modules.set(spec.name, { spec, functions });
    for (const listener of this.#listeners) listener();
  }

  list(): LuaModuleSpec[] {
    return [...this.#modules.values()].map((m) => m.spec);
  }

  modules(): readonly RegisteredModule[] {
    return [...this.#modules.values()];
  }

  /** Called after every `provide`; the runtime drops states built without the new module. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/**
 * A function declared `callsLua: false` is held to it: a Lua function among its arguments (at any
 * depth of a table) reaches it as a handle whose call fails, so a wrong declaration shows as an
 * error rather than as an unbounded callback run inline (script-bounds.ts trusts the declaration).
 */
function holdToNoCallbacks(qualified: string, fn: ModuleFunction): ModuleFunction {
  return (context: unknown, ...args: unknown[]) => {
    for (let i = 0; i < args.length; i++) {
      if (holdsFunction(args[i], new Set())) args[i] = refuseCalls(args[i], qualified, new Map());
    }
    return fn(context, ...args);
  };
}

const isFunctionRef = (value: unknown): value is LuaFunctionRef =>
  (value as { kind?: unknown } | null)?.kind === 'lua-function';

/** Plain tables as arguments arrive: arrays and objects that are not a runtime handle. */
const isPlainTable = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === undefined;

function holdsFunction(value: unknown, seen: Set<object>): boolean {
  if (isFunctionRef(value)) return true;
  if (!isPlainTable(value) || seen.has(value)) return false;
  seen.add(value);
  return Object.values(value).some((v) => holdsFunction(v, seen));
}

/** A copy of `value` with each Lua function replaced by a handle that refuses to be called. */
function refuseCalls(value: unknown, qualified: string, copies: Map<object, unknown>): unknown {
  if (isFunctionRef(value)) {
    return {
      kind: 'lua-function',
      call: () =>
        Promise.reject(
          new LuaError(`${qualified} is declared not to call Lua functions back (callsLua: false), yet called one`),
        ),
    } satisfies LuaFunctionRef;
  }
  if (!isPlainTable(value)) return value;
  const done = copies.get(value);
  if (done !== undefined) return done;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
  copies.set(value, copy);
  for (const [key, v] of Object.entries(value))
    (copy as Record<string, unknown>)[key] = refuseCalls(v, qualified, copies);
  return copy as LuaValue;
}
