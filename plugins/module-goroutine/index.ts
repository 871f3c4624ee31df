import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { goroutineModule } from './src/spec.js';

export { goroutineModule } from './src/spec.js';

/** The `goroutine` Lua module. The implementation loads in setup so `runner --help` stays quick. */
export const plugin = definePlugin({
  id: 'module-goroutine',
  version: '0.1.0',
  description: 'Lua module goroutine: run Lua functions concurrently',
  luaModules: [goroutineModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const { createGoroutineModule } = await import('./src/goroutine.js');
    lua.provide(goroutineModule, createGoroutineModule());
  },
});
