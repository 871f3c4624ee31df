import {
  CORE_CONFIG,
  createKernelLifecycle,
  createRedactor,
  dependencyTarget,
  RedactorRef,
  isRunnerError,
  orderPlugins,
  type Logger,
  type Plugin,
  type PluginContext,
  type PluginDescriptor,
  type PluginInstance,
  type Redactor,
  type Profile,
  type RunnerConfig,
  type RunningKernel,
  type ServiceRef,
} from '@runner/plugin-sdk';
import { KernelError, PluginGraphError, PluginSetupError, PluginStopError, messageOf, withTimeout } from './errors.js';
import { KernelEventBus } from './event-bus.js';
import { labelledLifecycle } from './labelled-lifecycle.js';
import type { DiscoveredPlugin } from './plugin-discovery.js';
import { ServiceRegistry } from './service-registry.js';

export interface BootOptions {
  profile: Profile;
  /** Every discovered plugin; the profile's members are picked from these. */
  plugins: readonly DiscoveredPlugin[];
  config: RunnerConfig;
  logger: Logger;
  kernelVersion: string;
  /** The process's one redactor (default: a new one); the logger already writes through it. */
  redactor?: Redactor;
}

interface Started {
  plugin: Plugin;
  instance: PluginInstance | void;
  stopCallbacks: (() => Promise<void> | void)[];
}

/** Plugins a profile loads: those listing it, or listing no profile at all. */
export function pluginsOfProfile(plugins: readonly DiscoveredPlugin[], profile: Profile): DiscoveredPlugin[] {
  return plugins.filter((p) => !p.plugin.profiles || p.plugin.profiles.includes(profile));
}

/**
 * Boots one profile: checks the graph, sets each plugin up in dependency order with a deadline,
 * runs the `ready` lifecycle stage. If anything fails, what was already set up is stopped in reverse order
 * before the error (naming the plugin) propagates.
 */
export async function bootKernel(options: BootOptions): Promise<RunningKernel> {
  const { profile, config, logger, kernelVersion } = options;
  const members = pluginsOfProfile(options.plugins, profile);
  const descriptorOf = new Map(members.map((m) => [m.plugin, m.descriptor]));
  const order = orderPlugins(
    members.map((m) => m.plugin),
    kernelVersion,
    (code, message, options) => new PluginGraphError(code, message, options),
  );
  const descriptors: PluginDescriptor[] = order.map((p) => descriptorOf.get(p) as PluginDescriptor);

  const redactor = options.redactor ?? createRedactor();
  const bus = new KernelEventBus({ logger, redactor });
  const lifecycle = createKernelLifecycle();
  const registry = new ServiceRegistry();
  registry.provide(RedactorRef, redactor, 'kernel');
  registerSecretConfig(redactor, config, order);
  const controller = new AbortController();
  const started: Started[] = [];
  const setupTimeout = Math.round(config.get<number>('kernel.setup_timeout') * 1000);
  const stopTimeout = Math.round(config.get<number>('kernel.stop_timeout') * 1000);

  let stopping: Promise<void> | undefined;
  const stop = (reason = 'stop requested'): Promise<void> => {
    stopping ??= stopAll(reason);
    return stopping;
  };

  const stopAll = async (reason: string): Promise<void> => {
    controller.abort();
    bus.emit('kernel.stopping', { profile, reason });
    const failures: { pluginId: string; phase: string; error: unknown }[] = [];
    try {
      await withTimeout(
        lifecycle.beforeStop.promise(reason),
        stopTimeout,
        () => new Error(`did not finish within ${stopTimeout} ms`),
      );
    } catch (error) {
      const pluginId = (error as KernelError).pluginId ?? 'kernel';
      failures.push({ pluginId, phase: 'lifecycle stage beforeStop', error });
    }
    // Reverse setup order: a plugin stops before the services it used are gone. Every stop is
    // awaited even when an earlier one failed, so no resource is left open behind an error.
    for (const entry of [...started].reverse()) {
      const steps: [string, () => Promise<void> | void][] = [
        ...entry.stopCallbacks.reverse().map((cb) => ['onStop callback', cb] as [string, () => Promise<void> | void]),
        ...(entry.instance?.stop
          ? [['stop', () => entry.instance?.stop?.()] as [string, () => Promise<void> | void]]
          : []),
      ];
      for (const [phase, step] of steps) {
        try {
          await withTimeout(
            Promise.resolve().then(step),
            stopTimeout,
            () => new Error(`did not finish within ${stopTimeout} ms`),
          );
        } catch (error) {
          failures.push({ pluginId: entry.plugin.id, phase, error });
          logger.error(`plugin ${entry.plugin.id}: ${phase} failed: ${messageOf(error)}`, { plugin: entry.plugin.id });
        }
      }
    }
    started.length = 0;
    if (failures.length > 0) throw new PluginStopError(failures);
    logger.debug('kernel stopped', { profile, reason });
  };

  try {
    for (const plugin of order) {
      const entry: Started = { plugin, instance: undefined, stopCallbacks: [] };
      const deps: Record<string, unknown> = {};
      for (const [key, dep] of Object.entries(plugin.dependsOn ?? {})) {
        deps[key] = registry.find(dependencyTarget(dep).ref);
      }
      const context: PluginContext = {
        pluginId: plugin.id,
        profile,
        kernelVersion,
        config,
        logger: logger.child({ plugin: plugin.id }),
        events: bus.forPlugin(plugin.id),
        redactor,
        lifecycle: labelledLifecycle(lifecycle, plugin.id),
        plugins: descriptors,
        provide: <T>(ref: ServiceRef<T>, implementation: T) => {
          if (!(plugin.provides ?? []).some((r) => r.id === ref.id)) {
            throw new KernelError(
              'service_undeclared',
              `plugin ${plugin.id}: provides service "${ref.id}" without declaring it in provides`,
              {
                pluginId: plugin.id,
              },
            );
          }
          registry.provide(ref, implementation, plugin.id);
        },
        onStop: (callback) => void entry.stopCallbacks.push(callback),
        signal: controller.signal,
      };
      // Registered before setup resolves, so a plugin that registered onStop callbacks and then
      // failed still has them run.
      started.push(entry);
      const timeout = plugin.setupTimeoutMs ?? setupTimeout;
      try {
        entry.instance = await withTimeout(
          Promise.resolve().then(() => plugin.setup?.(context, deps as never)),
          timeout,
          () =>
            new PluginSetupError(
              'plugin_setup_timeout',
              `plugin ${plugin.id}: setup did not finish within ${timeout} ms`,
              { pluginId: plugin.id },
            ),
        );
      } catch (error) {
        if (error instanceof PluginSetupError || error instanceof KernelError) throw error;
        throw new PluginSetupError('plugin_setup_failed', `plugin ${plugin.id}: setup failed: ${messageOf(error)}`, {
          pluginId: plugin.id,
          cause: error,
          // Bad input met during setup (a config value of the wrong type) stays bad input: exit 2.
          status: isRunnerError(error) && error.status === 400 ? 400 : 500,
        });
      }
      for (const ref of plugin.provides ?? []) {
        if (!registry.has(ref.id)) {
          throw new PluginSetupError(
            'service_not_provided',
            `plugin ${plugin.id}: declared service "${ref.id}" in provides but did not provide it in setup`,
            {
              pluginId: plugin.id,
            },
          );
        }
      }
      lifecycle.pluginReady.call(descriptorOf.get(plugin) as PluginDescriptor);
    }
    await lifecycle.ready.promise();
  } catch (error) {
    try {
      await stop(`boot failed: ${messageOf(error)}`);
    } catch (stopError) {
      logger.error(`stopping after a failed boot also failed: ${messageOf(stopError)}`);
    }
    throw error;
  }

  bus.emit('kernel.ready', { profile, plugins: descriptors.map((d) => d.id) });
  logger.debug('kernel ready', { profile, plugins: descriptors.map((d) => d.id) });

  return {
    profile,
    events: bus.forPlugin('kernel'),
    config,
    logger,
    get: (ref) => registry.get(ref),
    find: (ref) => registry.find(ref),
    stop,
    stopOnSignal: () =>
      new Promise<void>((resolve, reject) => {
        const onSignal = (signal: NodeJS.Signals) => {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          logger.info(`received ${signal}, stopping`, { signal });
          // A second signal while stopping means the operator wants out now.
          process.once('SIGINT', () => process.exit(130));
          process.once('SIGTERM', () => process.exit(143));
          stop(signal).then(resolve, reject);
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
      }),
  };
}

/** Values of config keys a plugin declares `secret` are masked wherever they would appear. */
function registerSecretConfig(redactor: Redactor, config: RunnerConfig, plugins: readonly Plugin[]): void {
  // The kernel's own keys too: an agent's join token given as a flag or in the config file.
  for (const declared of [CORE_CONFIG, ...plugins.map((plugin) => plugin.config ?? {})]) {
    for (const [key, spec] of Object.entries(declared)) {
      if (!spec.secret) continue;
      const value = config.find(key);
      if (typeof value === 'string') for (const part of secretParts(value, redactor)) redactor.addSecret(part);
    }
  }
}

/**
 * What of a secret value is the secret: of a URL (`store.url`), its password and secret-named
 * query values, so that its address stays readable in errors ("PostgreSQL at postgres://db:5432/x
 * is unavailable"); of anything else, the whole value.
 */
export function secretParts(value: string, redactor: Pick<Redactor, 'isSecretKey'>): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return [value];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [value];
  }
  const parts = url.password ? [url.password, decodeURIComponent(url.password)] : [];
  for (const [key, item] of url.searchParams) if (item && redactor.isSecretKey(key)) parts.push(item);
  return [...new Set(parts)];
}
