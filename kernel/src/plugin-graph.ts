// satisfies alone, not semver's index: the index loads all of semver, about 10 ms of every start-up,
// for this one range check. (A static import, so that a bundler sees it.)
import satisfies from 'semver/functions/satisfies.js';
import { dependencyTarget, type Plugin } from '@runner/plugin-sdk';
import { PluginGraphError } from './errors.js';

/**
 * Checks a profile's plugins as a whole and returns them in setup order. Every refusal happens
 * here, before any setup runs, so a bad graph never leaves half a kernel running.
 */
export function orderPlugins(plugins: readonly Plugin[], kernelVersion: string): Plugin[] {
  const providerOf = new Map<string, Plugin>();
  for (const plugin of plugins) {
    if (plugin.kernel && !satisfies(kernelVersion, plugin.kernel, { includePrerelease: true })) {
      throw new PluginGraphError(
        'kernel_incompatible',
        `plugin ${plugin.id} requires kernel ${plugin.kernel}, but this kernel is ${kernelVersion}`,
        { pluginId: plugin.id },
      );
    }
    for (const ref of plugin.provides ?? []) {
      const other = providerOf.get(ref.id);
      if (other) {
        throw new PluginGraphError(
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
        throw new PluginGraphError(
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
      throw new PluginGraphError('plugin_cycle', `circular plugin dependency: ${cycle}`, { pluginId: plugin.id });
    }
    state.set(plugin, 'visiting');
    for (const provider of needs.get(plugin) ?? []) visit(provider, [...path, plugin]);
    state.set(plugin, 'done');
    order.push(plugin);
  };
  for (const plugin of plugins) visit(plugin, []);
  return order;
}
