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
 * The kernel's lifecycle stages, declared here and nowhere else (tapable hooks underneath, named
 * "lifecycle" so that the word "hooks" stays free for the feature of that name). The kernel creates
 * one frozen set per boot; plugins tap them in `setup` through `ctx.lifecycle`. A tap that throws
 * fails with the plugin's id and the stage's name. A plugin that offers tap points of its own
 * exposes them through its service (the engine's `runTaps`), never by adding here. Each stage's
 * contract (kind, order, arguments) is in the README's "Kernel lifecycle" table.
 */
export function createKernelLifecycle() {
  return Object.freeze({
    /** After one plugin's setup resolved, in dependency order; sync so it cannot delay boot. */
    pluginReady: new SyncHook(['plugin']) as SyncHook<[PluginDescriptor]>,
    /** After every plugin is set up: start listening, start timers. Boot waits for every tap. */
    ready: new AsyncSeriesHook([]) as AsyncSeriesHook<[]>,
    /** First step of a stop, before any plugin's stop: refuse new work, drain what runs. */
    beforeStop: new AsyncSeriesHook(['reason']) as AsyncSeriesHook<[string]>,
  });
}

export type KernelLifecycle = ReturnType<typeof createKernelLifecycle>;
export type KernelLifecycleStage = keyof KernelLifecycle;
