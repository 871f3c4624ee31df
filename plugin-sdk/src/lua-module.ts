import type { Logger } from './logger.js';
import { createServiceRef } from './service-ref.js';

/** One argument of a module function, as `runner modules info` shows it. */
export interface LuaArgSpec {
  /** As the docs call it; `...` for the rest of the arguments (`spawn(fn, ...)`). */
  name: string;
  /**
   * Its Lua type(s): `string`, `string|string[]`, `{cwd?: string, env?: table}`, `any`. An argument
   * that may hold a Lua function says `function` here, and its function must declare `callsLua`.
   */
  type: string;
  /** True when it may be nil or left out. */
  optional?: boolean;
}

/**
 * One function of a Lua module: what `runner modules info` documents, and what the runtime places
 * and checks scripts by. Every property but `example` is required and checked by defineLuaModule.
 */
export interface LuaFunctionSpec {
  args: readonly LuaArgSpec[];
  /** What it returns, in Lua terms: `table`, `{changed, path}`, `string[]`, `nil`, `...`. */
  result: string;
  description: string;
  /** True when calling it changes something outside the script; dry-run then skips it. */
  sideEffects: boolean;
  /**
   * True when it calls (or waits for) a Lua function of the script, such as `goroutine.parallel`'s
   * tasks. `lua.isolation: auto` never runs a script that calls such a function inline, as it cannot
   * bound what the callback does; and the runtime holds every other function to its word: a Lua
   * function passed to it arrives as a handle that refuses to be called.
   */
  callsLua: boolean;
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

/** `run(cmd: string|string[], opts?: table) -> table`: a function's signature, from its declaration. */
export function luaSignature(name: string, fn: Pick<LuaFunctionSpec, 'args' | 'result'>): string {
  const args = fn.args.map((a) => (a.name === '...' ? '...' : `${a.name}${a.optional ? '?' : ''}: ${a.type}`));
  return `${name}(${args.join(', ')})${fn.result === 'nil' ? '' : ` -> ${fn.result}`}`;
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
  for (const [fn, declared] of Object.entries<LuaFunctionSpec>(spec.functions)) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(fn)) {
      throw new TypeError(`Lua module "${spec.name}": function name "${fn}" is not a Lua identifier`);
    }
    const problem = functionSpecProblem(declared);
    if (problem) throw new TypeError(`Lua module "${spec.name}": function "${fn}" ${problem}`);
  }
  return Object.freeze(spec);
}

/**
 * What is wrong with a function's declaration, or null. Checked at definition and again by the
 * registry (a spec may be built without defineLuaModule), so placement never reads a guess.
 */
export function functionSpecProblem(fn: unknown): string | null {
  if (typeof fn !== 'object' || fn === null) return 'is not declared as an object';
  const spec = fn as Partial<Record<keyof LuaFunctionSpec, unknown>>;
  if (!Array.isArray(spec.args)) return 'must declare args (a list, empty when it takes none)';
  for (const [i, arg] of (spec.args as unknown[]).entries()) {
    const a = arg as Partial<LuaArgSpec> | null;
    if (typeof a?.name !== 'string' || a.name === '' || typeof a.type !== 'string' || a.type === '')
      return `must declare a name and a type for argument #${i + 1}`;
    if (a.optional !== undefined && typeof a.optional !== 'boolean')
      return `argument "${a.name}": optional must be a boolean`;
  }
  if (typeof spec.result !== 'string' || spec.result === '') return "must declare its result ('nil' for none)";
  if (typeof spec.description !== 'string' || spec.description.trim() === '') return 'must have a description';
  if (typeof spec.sideEffects !== 'boolean') return 'must declare sideEffects (true or false)';
  if (typeof spec.callsLua !== 'boolean') return 'must declare callsLua (true or false)';
  const takesFunction = (spec.args as LuaArgSpec[]).find((a) => /\bfunction\b/.test(a.type));
  if (takesFunction && !spec.callsLua)
    return `takes a function (argument "${takesFunction.name}") but declares callsLua: false`;
  return null;
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
