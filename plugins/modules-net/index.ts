import { defineLuaModulePlugin, offerLuaModule } from '@runner/plugin-sdk';
import { netModule } from './src/net/spec.js';

export { netModule };

/**
 * Lua modules for the network. Each implementation loads in setup, so importing the entry reads
 * declarations only.
 */
export const plugin = defineLuaModulePlugin({
  id: 'modules-net',
  version: '0.1.0',
  description: 'Lua modules for the network: HTTP, downloads, ports, DNS',
  modules: [offerLuaModule(netModule, async () => (await import('./src/net/net.js')).createNetModule())],
});
