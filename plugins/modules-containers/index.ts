import { defineLuaModulePlugin, offerLuaModule } from '@runner/plugin-sdk';
import { dockerModule, podmanModule } from './src/spec.js';

export { dockerModule, podmanModule } from './src/spec.js';

/**
 * The `docker` and `podman` Lua modules: one implementation over the command line both engines
 * share. It loads in setup, so `runner --help` (which imports every plugin's entry) reads
 * declarations only.
 */
export const plugin = defineLuaModulePlugin({
  id: 'modules-containers',
  version: '0.1.0',
  description: 'Lua modules docker and podman: images, containers, exec, logs, networks, volumes, compose',
  modules: [
    offerLuaModule(dockerModule, async () => (await import('./src/engine.js')).createEngineModule('docker')),
    offerLuaModule(podmanModule, async () => (await import('./src/engine.js')).createEngineModule('podman')),
  ],
});
