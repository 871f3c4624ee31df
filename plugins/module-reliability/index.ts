import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { reliabilityModule } from './src/spec.js';

export { reliabilityModule } from './src/spec.js';

/** The `reliability` Lua module. The implementation loads in setup so `runner --help` stays quick. */
export const plugin = definePlugin({
  id: 'module-reliability',
  version: '0.1.0',
  description: 'Lua module reliability: retry, circuit breakers, timeouts',
  luaModules: [reliabilityModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const { createReliabilityModule } = await import('./src/reliability.js');
    lua.provide(reliabilityModule, createReliabilityModule());
  },
});
