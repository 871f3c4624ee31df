import {
  ConflictError,
  SCRIPT_GLOBALS,
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
    const declared = Object.keys(spec.functions);
    for (const name of declared) {
      const fn = (implementation as Record<string, unknown>)[name];
      if (typeof fn !== 'function') {
        throw new TypeError(`Lua module "${spec.name}": function "${name}" is declared but not implemented`);
      }
      functions.set(name, fn as ModuleFunction);
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
