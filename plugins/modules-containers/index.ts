import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { dockerModule, podmanModule } from './src/spec.js';

export { dockerModule, podmanModule } from './src/spec.js';

/** The `docker` and `podman` Lua modules. The implementation loads in setup so `runner --help` stays quick. */
export const plugin = definePlugin({
  id: 'modules-containers',
  version: '0.1.0',
  description: 'Lua modules docker and podman',
  luaModules: [dockerModule, podmanModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const { createEngineModule } = await import('./src/engine.js');
    lua.provide(dockerModule, createEngineModule('docker'));
    lua.provide(podmanModule, createEngineModule('podman'));
  },
});
