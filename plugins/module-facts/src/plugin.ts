import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { factsModule } from './spec.js';

export const plugin = definePlugin({
  id: 'module-facts',
  version: '0.1.0',
  description: 'Lua module facts: host, CPU, memory, disks and network facts',
  luaModules: [factsModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    // The implementation loads here and systeminformation on the first read: `runner --help`
    // imports every plugin's entry and must stay fast.
    const { createFactsModule } = await import('./facts.js');
    lua.provide(factsModule, createFactsModule());
  },
});
