import type { Logger } from './logger.js';
import { createServiceRef } from './service-ref.js';

/** Documentation of one function of a Lua module, shown by `runner modules info`. */
export interface LuaFunctionSpec {
  /**
   * Lua-flavoured signature: `run(cmd: string|string[], opts?: table) -> table`. A parameter the
   * function calls back must say `function` (`fn: function`): `lua.isolation: auto` then runs the
   * scripts that call it in a worker, as it cannot bound what the callback does.
   */
  signature: string;
  description: string;
  /** True when calling it changes something outside the script; dry-run then skips it. */
  sideEffects: boolean;
  /** A short Lua snippet. */
  example?: string;
}

/** A Lua module's static declaration: readable without setting any plugin up. */
export interface LuaModuleSpec<F extends string = string> {
  /** The global name in Lua, e.g. `exec`. */
  name: string;
  description: string;
  /** Longer, free-form documentation. */
  docs?: string;
  functions: Readonly<Record<F, LuaFunctionSpec>>;
}

/** Values crossing between Lua and JavaScript. Tables become arrays (1..n keys) or objects. */
export type LuaValue =
  | null
  | undefined
  | boolean
  | number
  | string
  | LuaFunctionRef
  | LuaLazyTable
  | LuaValue[]
  | { [key: string]: LuaValue };

/** A Lua function passed to a module function (e.g. `goroutine.parallel`'s tasks). */
export interface LuaFunctionRef {
  readonly kind: 'lua-function';
  /** Calls it in a coroutine of its own; resolves with its return values. */
  call(...args: LuaValue[]): Promise<LuaValue[]>;
}

/**
 * A table handed to Lua whose entries are converted only when the script reads them (or iterates
 * with `pairs`): for large context a script usually reads a little of, such as `tasks`.
 */
export interface LuaLazyTable {
  readonly kind: 'lua-lazy-table';
  readonly source: Readonly<Record<string, unknown>>;
}

export function luaLazyTable(source: Readonly<Record<string, unknown>>): LuaLazyTable {
  return { kind: 'lua-lazy-table', source };
}

/** Return this from a module function to give Lua several results. */
export interface LuaMultiple {
  readonly kind: 'lua-multiple';
  readonly values: LuaValue[];
}

export function luaMultiple(...values: LuaValue[]): LuaMultiple {
  return { kind: 'lua-multiple', values };
}

/** Facts about the script calling a module function. */
export interface LuaCallContext {
  /** Dry-run: functions with side effects must not act and should say what they would do. */
  dryRun: boolean;
  /** The run's log for this task (or the REPL's). */
  logger: Logger;
  /** Aborted when the task times out or the run is cancelled. */
  signal: AbortSignal;
  /** Where the script runs; absent in the REPL. */
  run?: { workflow: string; runId: string; task: string; attempt: number; agent: string };
}

/** The implementation of a module: one function per declared function. May be async. */
export type LuaModuleImplementation<F extends string> = {
  [K in F]: (call: LuaCallContext, ...args: LuaValue[]) => LuaValue | LuaMultiple | Promise<LuaValue | LuaMultiple>;
};

/** Declares a Lua module; pass it to `definePlugin({ luaModules: [...] })` and provide it in setup. */
export function defineLuaModule<const F extends string>(spec: LuaModuleSpec<F>): LuaModuleSpec<F> {
  if (!/^[a-z_][a-z0-9_]*$/.test(spec.name)) {
    throw new TypeError(`Lua module name "${spec.name}" must be a Lua identifier in lower case`);
  }
  for (const fn of Object.keys(spec.functions)) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(fn)) {
      throw new TypeError(`Lua module "${spec.name}": function name "${fn}" is not a Lua identifier`);
    }
  }
  return Object.freeze(spec);
}

/** The registry of Lua modules, provided by the Lua runtime plugin. */
export interface LuaModules {
  /** Registers the implementation of a declared module. A name may be provided once. */
  provide<F extends string>(spec: LuaModuleSpec<F>, implementation: LuaModuleImplementation<F>): void;
  /** The declared modules that have an implementation, by name. */
  list(): LuaModuleSpec[];
}

export const LuaModulesRef = createServiceRef<LuaModules>({
  id: 'lua.modules',
  description: 'registry of Lua modules (the Lua runtime plugin)',
});

/** The Lua type name of a value that crossed from Lua, for error messages (`got table`). */
export function luaType(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return 'table';
  if (typeof value === 'object') return (value as { kind?: unknown }).kind === 'lua-function' ? 'function' : 'table';
  return typeof value;
}

/** A Lua table converted to a JS object; an empty Lua table may arrive as `[]`, which counts too. */
export function isLuaTable(value: unknown): value is Record<string, unknown> {
  return luaType(value) === 'table';
}
