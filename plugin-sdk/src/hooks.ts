import { AsyncSeriesHook, SyncHook } from 'tapable';

/** Public facts about a loaded plugin, as other plugins and the CLI see them. */
export interface PluginDescriptor {
  id: string;
  version: string;
  description: string;
  /** Directory the plugin was loaded from. */
  source: string;
  /** Whether it came from the built-in `plugins/` directory or an extra one. */
  origin: 'builtin' | 'external';
}

/**
 * The kernel's hooks, declared here and nowhere else. The kernel creates one frozen set per boot;
 * plugins tap them in `setup`. A tap that throws fails with the plugin's id and the hook's name.
 * A plugin that offers hooks of its own exposes them through its service, never by adding here.
 */
export function createKernelHooks() {
  return Object.freeze({
    /** After one plugin's setup resolved, in dependency order; sync so it cannot delay boot. */
    pluginReady: new SyncHook(['plugin']) as SyncHook<[PluginDescriptor]>,
    /** After every plugin is set up: start listening, start schedulers. Boot waits for every tap. */
    ready: new AsyncSeriesHook([]) as AsyncSeriesHook<[]>,
    /** First step of a stop, before any plugin's stop: refuse new work, drain what runs. */
    beforeStop: new AsyncSeriesHook(['reason']) as AsyncSeriesHook<[string]>,
  });
}

export type KernelHooks = ReturnType<typeof createKernelHooks>;
export type KernelHookName = keyof KernelHooks;
