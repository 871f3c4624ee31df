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
      schema: { type: 'string', enum: ['auto', 'worker', 'inline'] },
      // auto: scripts proven bounded from their bytecode run inline (the run path's cost), every
      // other in a worker (README, "Where scripts run"); all-worker cost the run path a fifth of
      // its throughput, all-inline lets one script hold or exhaust the process.
      default: 'auto',
      help: "where task scripts run: 'auto' (inline when the script is proven bounded from its bytecode: no loop, no function of its own, calls to the runner's modules and a few bounded library functions only; every other script in a worker), 'worker' (a pooled worker thread each, whose heap limit is the script's memory limit; a runaway script or a stuck library call ends its worker, not the process) or 'inline' (the process's own thread, the REPL's way)",
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
    const isolation = ctx.config.get<string>('lua.isolation');
    const workerOptions = () => ({
      ...options,
      maxWorkers: ctx.config.get<number>('lua.max_workers'),
      idleWorkers: ctx.config.get<number>('lua.idle_workers'),
    });
    const runtime =
      isolation === 'inline'
        ? new (await import('./runtime.js')).LuaRuntimeService(registry, options)
        : isolation === 'auto'
          ? new (await import('./auto-runtime.js')).AutoLuaRuntime(registry, workerOptions())
          : new (await import('./worker-runtime.js')).WorkerLuaRuntime(registry, workerOptions());
    ctx.provide(LuaRuntimeRef, runtime);
    // The first task script need not wait for a worker to start: one starts while the rest boots.
    // (auto starts one when a script that needs it is compiled, before its run starts.)
    if (isolation === 'worker' && 'warm' in runtime) runtime.warm();
    return { stop: () => runtime.close() };
  },
});
