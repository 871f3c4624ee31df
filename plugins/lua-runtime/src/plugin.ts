import { definePlugin, LuaModulesRef, LuaRuntimeRef } from '@runner/plugin-sdk';
import { ModuleRegistry } from './module-registry.js';

export const plugin = definePlugin({
  id: 'lua-runtime',
  version: '0.1.0',
  description:
    'Lua 5.3 on fengari: the module registry, coroutine-based async module calls, CPU-fair scheduling, timeouts',
  provides: [LuaModulesRef, LuaRuntimeRef],
  config: {
    'lua.time_slice_ms': {
      schema: { type: 'number', exclusiveMinimum: 0 },
      default: 5,
      help: 'milliseconds a Lua state runs before other work gets a turn',
    },
    'lua.heap_guard_ratio': {
      schema: { type: 'number', minimum: 0, maximum: 1 },
      default: 0.7,
      help: "share of the process's heap limit past which a running script is stopped to keep the process up (0: off)",
    },
    'lua.isolation': {
      schema: { type: 'string', enum: ['worker', 'inline'] },
      default: 'worker',
      help: "where task scripts run: 'worker' (a pooled worker thread each, whose heap limit is the script's memory limit; a runaway script or a stuck library call ends its worker, not the process) or 'inline' (the process's own thread, the REPL's way)",
    },
    'lua.max_workers': {
      schema: { type: 'integer', minimum: 1 },
      default: 16,
      help: 'Lua worker threads alive at most (one script each); task scripts beyond wait for a free one',
    },
    'lua.idle_workers': {
      schema: { type: 'integer', minimum: 0 },
      default: 2,
      help: 'idle Lua worker threads kept started for the next task scripts',
    },
    'lua.pool_size': {
      schema: { type: 'integer', minimum: 1 },
      default: 2,
      help: 'Lua states kept ready for reuse',
    },
  },
  async setup(ctx) {
    const registry = new ModuleRegistry();
    ctx.provide(LuaModulesRef, registry);
    // fengari loads here, not at import: `runner --help` imports every plugin's entry.
    const options = {
      sliceMs: ctx.config.get<number>('lua.time_slice_ms'),
      poolSize: ctx.config.get<number>('lua.pool_size'),
      heapGuardRatio: ctx.config.get<number>('lua.heap_guard_ratio'),
    };
    const runtime =
      ctx.config.get<string>('lua.isolation') === 'inline'
        ? new (await import('./runtime.js')).LuaRuntimeService(registry, options)
        : new (await import('./worker-runtime.js')).WorkerLuaRuntime(registry, {
            ...options,
            maxWorkers: ctx.config.get<number>('lua.max_workers'),
            idleWorkers: ctx.config.get<number>('lua.idle_workers'),
          });
    ctx.provide(LuaRuntimeRef, runtime);
    // The first task script need not wait for a worker to start: one starts while the rest boots.
    if ('warm' in runtime) runtime.warm();
    return { stop: () => runtime.close() };
  },
});
