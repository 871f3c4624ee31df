import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { netModule } from './spec.js';

export const plugin = definePlugin({
  id: 'module-net',
  version: '0.1.0',
  description: 'Lua module net: HTTP get/post, downloads, port checks and DNS lookups',
  luaModules: [netModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    // The implementation loads here, not at import: `runner --help` imports every plugin's entry.
    const { createNetModule } = await import('./net.js');
    lua.provide(netModule, createNetModule());
  },
});
