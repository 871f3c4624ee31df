import type { CommandExtension, CommandSpec } from './commands.js';
import type { ConfigDeclaration, RunnerConfig } from './config.js';
import type { Redactor } from './redactor.js';
import type { EventBus } from './events.js';
import type { KernelLifecycle, PluginDescriptor } from './lifecycle.js';
import type { LuaModuleSpec } from './lua-module.js';
import type { Logger } from './logger.js';
import type { DependencyMap, ResolvedDependencies, ServiceRef } from './service-ref.js';

/**
 * The profiles the kernel boots: `runner server` (master), `runner agent start`, `runner run`, and
 * `executor`: the child a master starts, as an unprivileged user, to run local tasks that have side
 * effects (the executor plugin; see local-executor.ts).
 */
export type Profile = 'master' | 'agent' | 'embedded' | 'executor';
export const PROFILES: readonly Profile[] = Object.freeze(['master', 'agent', 'embedded', 'executor']);

/** What a plugin's `setup` receives besides its dependencies. */
export interface PluginContext {
  readonly pluginId: string;
  readonly profile: Profile;
  readonly kernelVersion: string;
  readonly config: RunnerConfig;
  /** A logger whose lines carry `plugin: <id>`. */
  readonly logger: Logger;
  readonly events: EventBus;
  /** The kernel's one redactor (also `RedactorRef`). */
  readonly redactor: Redactor;
  /** The kernel's lifecycle stages (pluginReady, ready, beforeStop); taps are labelled with this plugin's id. */
  readonly lifecycle: KernelLifecycle;
  /** Every plugin of this boot, in setup order. */
  readonly plugins: readonly PluginDescriptor[];
  /** Registers the implementation of a service this plugin declared in `provides`. */
  provide<T>(ref: ServiceRef<T>, implementation: T): void;
  /** Runs when the kernel stops, before the plugin's own `stop`, latest registered first. */
  onStop(callback: () => Promise<void> | void): void;
  /** Aborted once the kernel begins to stop. */
  readonly signal: AbortSignal;
}

/** Returned by `setup` when the plugin has something to release. */
export interface PluginInstance {
  stop?(): Promise<void> | void;
}

/** The declaration of a plugin. */
export interface PluginDefinition<D extends DependencyMap = DependencyMap> {
  /** Kebab-case, unique among loaded plugins. */
  id: string;
  version: string;
  description: string;
  /** Semver range of kernel versions this plugin works with (e.g. `^0.1.0`); default any. */
  kernel?: string;
  /** Profiles that load it; default every profile. */
  profiles?: readonly Profile[];
  /** Services this plugin needs; setup receives them typed under the same keys. */
  dependsOn?: D;
  /** Services this plugin provides; each must be provided during setup. */
  provides?: readonly ServiceRef<unknown>[];
  /** Lua modules it declares (documentation is read without setup). */
  luaModules?: readonly LuaModuleSpec[];
  /** Commands it adds to the `runner` CLI. */
  commands?: readonly CommandSpec[];
  /**
   * The REST routes it serves, declared without handlers (`declareRoute`): the build writes the
   * OpenAPI document and the UI's typed client from every plugin's declarations without starting
   * a master, and the CLI builds resource commands from them (`resourceCommand`). Setup serves
   * each with `router.add(serve(declaration, handler))`; a master serves exactly these.
   */
  routes?: readonly import('./http.js').RouteDeclaration<any, any, any>[];
  /**
   * Its routes outside `/api/v1` that write their own answer (`GET /metrics`), declared without
   * handlers for the OpenAPI document as `routes` are; setup serves each with `router.plain`.
   */
  plainRoutes?: readonly Pick<import('./http.js').PlainRoute, 'method' | 'path' | 'summary' | 'permission'>[];
  /** Options it adds to commands other plugins own. */
  commandOptions?: readonly CommandExtension[];
  /** Config keys it reads, with types, defaults and help (checked by the kernel before boot). */
  config?: ConfigDeclaration;
  /**
   * Loads a MasterLocator (the agent transport's: Master.Describe over gRPC). The kernel's CLI
   * calls it lazily, without booting the plugin, when a command looks a master up by its gRPC
   * address; so the SDK needs no gRPC.
   */
  masterLocator?: () => Promise<import('./master-client.js').MasterLocator>;
  /**
   * The retention policies this plugin registers with `store.retain` when it runs, built over any
   * opened store without setting the plugin up: `runner db stats` reports what each keeps and
   * would prune when no master has the data directory open. Must be the same policies (the same
   * functions) setup registers, and must not write; resolves with none when the plugin's tables
   * are not in this store.
   */
  retention?: (
    store: import('./store.js').Store,
    config: import('./config.js').RunnerConfig,
  ) => Promise<readonly import('./store.js').RetentionPolicy[]>;
  /**
   * The tables this plugin keeps in the store: each owner's migrations, the same list setup passes
   * to `store.migrate` (loaded on use, so `runner --help` imports none of it). `runner db copy` and
   * the logical backup of PostgreSQL create the schema from these on the other backend, and refuse
   * a table no plugin declares: every plugin with a table declares it here.
   */
  schema?: () => Promise<readonly import('./store.js').StoreSchema[]>;
  /**
   * Checks this plugin adds to `runner doctor`, run in the CLI without setting the plugin up (the
   * store checks its PostgreSQL: connection, version, migrations). Must not throw: a problem is a
   * `fail` or `warn` line saying what to do; must not change anything.
   */
  doctor?: (context: import('./commands.js').CommandContext) => Promise<readonly import('./commands.js').DoctorCheck[]>;
  /** Time allowed for setup in milliseconds (default: config `kernel.setup_timeout`, 10 s). */
  setupTimeoutMs?: number;
  setup?(context: PluginContext, deps: ResolvedDependencies<D>): Promise<PluginInstance | void> | PluginInstance | void;
}

/** A definition after `definePlugin`: frozen and branded so the loader can recognise it. */
export type Plugin<D extends DependencyMap = DependencyMap> = Readonly<PluginDefinition<D>> & {
  readonly [PLUGIN_BRAND]: true;
};

/** Symbol.for so that a plugin built against another copy of the SDK is still recognised. */
export const PLUGIN_BRAND: unique symbol = Symbol.for('runner.plugin') as never;

/**
 * Declares a plugin. Export the result as a named export of the plugin's entry module.
 *
 * ```ts
 * export const plugin = definePlugin({
 *   id: 'hello', version: '1.0.0', description: 'Says hello',
 *   dependsOn: { modules: LuaModulesRef },
 *   setup(ctx, { modules }) { ... },
 * });
 * ```
 */
export function definePlugin<D extends DependencyMap = Record<string, never>>(
  definition: PluginDefinition<D>,
): Plugin<D> {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(definition.id)) {
    throw new TypeError(`plugin id "${definition.id}" must be kebab-case (e.g. "module-exec")`);
  }
  return Object.freeze({ ...definition, [PLUGIN_BRAND]: true as const });
}

/** True for a value made by `definePlugin`, from any copy of the SDK. */
export function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PLUGIN_BRAND] === true;
}
