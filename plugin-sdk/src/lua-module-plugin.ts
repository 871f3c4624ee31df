import type { LuaModuleImplementation, LuaModules, LuaModuleSpec } from './lua-module.js';
import { LuaModulesRef } from './lua-module.js';
import { definePlugin, type Plugin, type PluginContext, type PluginDefinition, type PluginInstance } from './plugin.js';
import type { DependencyMap, ResolvedDependencies } from './service-ref.js';

/**
 * One module a plugin offers: its declaration, read without setup, and how to build its
 * implementation, called once in setup. `implement` should `import()` the implementation, so that
 * importing the plugin's entry (every command does) loads declarations only.
 */
export interface LuaModuleOffer<D extends DependencyMap> {
  spec: LuaModuleSpec;
  implement(
    deps: ResolvedDependencies<D>,
    ctx: PluginContext,
  ): Promise<LuaModuleImplementation<string>> | LuaModuleImplementation<string>;
}

/** Ties an implementation's function names to its declaration's. */
export function offerLuaModule<const F extends string, D extends DependencyMap = DependencyMap>(
  spec: LuaModuleSpec<F>,
  implement: (deps: ResolvedDependencies<D>, ctx: PluginContext) => Promise<LuaModuleImplementation<F>>,
): LuaModuleOffer<D> {
  return { spec, implement: implement as LuaModuleOffer<D>['implement'] };
}

export interface LuaModulePluginDefinition<D extends DependencyMap> extends Omit<
  PluginDefinition<D>,
  'luaModules' | 'setup' | 'dependsOn'
> {
  /** Services its modules need besides the module registry (which it always depends on, as `lua`). */
  dependsOn?: D;
  /** The modules, all of one domain (host management, networking...). */
  modules: readonly LuaModuleOffer<D>[];
  /**
   * Runs before the modules are built, for what the plugin sets up besides them (services it
   * `provides`, shared helpers): what it returns is handed to its `stop`.
   */
  setup?(ctx: PluginContext, deps: ResolvedDependencies<D>): Promise<PluginInstance | void> | PluginInstance | void;
}

/**
 * A plugin offering several Lua modules of one domain. Its setup runs the plugin's own `setup`,
 * then builds every module's implementation (in parallel) and provides it to the registry; a
 * module that fails to build fails the plugin's setup, naming the module.
 */
export function defineLuaModulePlugin<D extends DependencyMap = Record<string, never>>(
  definition: LuaModulePluginDefinition<D>,
): Plugin<D & { lua: typeof LuaModulesRef }> {
  const { modules, setup, dependsOn, ...rest } = definition;
  type Deps = D & { lua: typeof LuaModulesRef };
  return definePlugin<Deps>({
    ...rest,
    luaModules: modules.map((m) => m.spec),
    dependsOn: { ...(dependsOn ?? ({} as D)), lua: LuaModulesRef } as Deps,
    async setup(ctx, deps) {
      const own = await setup?.(ctx, deps as ResolvedDependencies<D>);
      const built = await Promise.all(
        modules.map(async (m) => {
          try {
            return await m.implement(deps as ResolvedDependencies<D>, ctx);
          } catch (error) {
            throw new Error(`Lua module "${m.spec.name}" could not be set up: ${(error as Error).message}`, {
              cause: error,
            });
          }
        }),
      );
      const { lua } = deps as unknown as { lua: LuaModules };
      modules.forEach((m, i) => lua.provide(m.spec, built[i]));
      return own ?? undefined;
    },
  });
}
