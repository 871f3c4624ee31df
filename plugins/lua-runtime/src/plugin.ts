import { definePlugin, LuaModulesRef, LuaRuntimeRef } from '@runner/plugin-sdk';
import { ModuleRegistry } from './module-registry.js';

export const plugin = definePlugin({
  id: 'lua-runtime',
  version: '0.1.0',
  description:
    'Lua 5.3 on fengari: the module registry, coroutine-based async module calls, CPU-fair scheduling, timeouts',
  provides: [LuaModulesRef, LuaRuntimeRef],
  async setup(ctx) {
    const registry = new ModuleRegistry();
    ctx.provide(LuaModulesRef, registry);
    // fengari loads here, not at import: `runner --help` imports every plugin's entry.
    const { LuaRuntimeService } = await import('./runtime.js');
    const runtime = new LuaRuntimeService(registry, {
      sliceMs: ctx.config.get('lua.time_slice_ms', 5),
      poolSize: ctx.config.get('lua.pool_size', 2),
    });
    ctx.provide(LuaRuntimeRef, runtime);
    return { stop: () => runtime.close() };
  },
});
