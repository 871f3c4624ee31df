import { createRequire } from 'node:module';
import { RunnerError } from './errors.js';
import type { Plugin } from './plugin.js';
import { dependencyTarget } from './service-ref.js';

// Loaded only for a plugin that names the kernel versions it needs (no built-in one does): semver
// compiles some forty regular expressions as it loads, which every command paid for. satisfies
// alone, not semver's index, which loads all of semver.
type Satisfies = (version: string, range: string, options: { includePrerelease: boolean }) => boolean;
const satisfies: Satisfies = (...args) =>
  (createRequire(import.meta.url)('semver/functions/satisfies.js') as Satisfies)(...args);

/** Makes the error a refusal throws; the kernel passes its PluginGraphError. */
export type PluginGraphErrorFactory = (
  code: string,
  message: string,
  options: { pluginId: string; details?: Record<string, unknown> },
) => Error;

const defaultError: PluginGraphErrorFactory = (code, message, { pluginId, details }) =>
  new RunnerError(code, message, { details: { pluginId, ...details } });

/**
 * Checks a profile's plugins as a whole and returns them in setup order. Every refusal happens
 * here, before any setup runs, so a bad graph never leaves half a kernel running. The one
 * implementation: the kernel and the SDK's test kernel both order setup with it.
 * `kernelVersion` undefined skips the plugins' kernel range check (the test kernel has no version).
 */
export function orderPlugins(
  plugins: readonly Plugin[],
  kernelVersion: string | undefined,
  makeError: PluginGraphErrorFactory = defaultError,
): Plugin[] {
  const providerOf = new Map<string, Plugin>();
  for (const plugin of plugins) {
    if (
      plugin.kernel &&
      kernelVersion !== undefined &&
      !satisfies(kernelVersion, plugin.kernel, { includePrerelease: true })
    ) {
      throw makeError(
        'kernel_incompatible',
        `plugin ${plugin.id} requires kernel ${plugin.kernel}, but this kernel is ${kernelVersion}`,
        { pluginId: plugin.id },
      );
    }
    for (const ref of plugin.provides ?? []) {
      const other = providerOf.get(ref.id);
      if (other) {
        throw makeError(
          'service_duplicate',
          `service "${ref.id}" is provided by both plugin ${other.id} and plugin ${plugin.id}`,
          { pluginId: plugin.id },
        );
      }
      providerOf.set(ref.id, plugin);
    }
  }

  // Edges point from a plugin to the plugins providing what it depends on.
  const needs = new Map<Plugin, Plugin[]>();
  for (const plugin of plugins) {
    const providers: Plugin[] = [];
    for (const [key, dep] of Object.entries(plugin.dependsOn ?? {})) {
      const { ref, optional } = dependencyTarget(dep);
      const provider = providerOf.get(ref.id);
      if (provider) {
        if (provider !== plugin) providers.push(provider);
      } else if (!optional) {
        throw makeError(
          'service_missing',
          `plugin ${plugin.id} depends on service "${ref.id}" (as ${key}), which no loaded plugin provides`,
          { pluginId: plugin.id, details: { service: ref.id } },
        );
      }
    }
    needs.set(plugin, providers);
  }

  // Depth-first topological sort in discovery order, so the order is stable run to run.
  const order: Plugin[] = [];
  const state = new Map<Plugin, 'visiting' | 'done'>();
  const visit = (plugin: Plugin, path: Plugin[]): void => {
    const seen = state.get(plugin);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(plugin)), plugin].map((p) => p.id).join(' -> ');
      throw makeError('plugin_cycle', `circular plugin dependency: ${cycle}`, { pluginId: plugin.id });
    }
    state.set(plugin, 'visiting');
    for (const provider of needs.get(plugin) ?? []) visit(provider, [...path, plugin]);
    state.set(plugin, 'done');
    order.push(plugin);
  };
  for (const plugin of plugins) visit(plugin, []);
  return order;
}
