import { defineLuaModulePlugin, offerLuaModule } from '@runner/plugin-sdk';
import { cryptoModule, iniModule, jsonModule, tomlModule, yamlModule } from './src/data/spec.js';
import { goroutineModule } from './src/goroutine/spec.js';
import { logModule } from './src/log/spec.js';
import { reliabilityModule } from './src/reliability/spec.js';

export { cryptoModule, goroutineModule, iniModule, jsonModule, logModule, reliabilityModule, tomlModule, yamlModule };

/**
 * Lua modules for what scripts do among themselves: run functions concurrently, retry them, log.
 * Each implementation loads in setup, so importing the entry reads declarations only.
 */
export const plugin = defineLuaModulePlugin({
  id: 'modules-script',
  version: '0.1.0',
  description:
    'Lua modules for scripts: concurrency, retries and circuit breakers, logging, JSON, YAML, TOML, INI, crypto',
  modules: [
    offerLuaModule(goroutineModule, async () => (await import('./src/goroutine/goroutine.js')).createGoroutineModule()),
    offerLuaModule(logModule, async () => (await import('./src/log/log.js')).createLogModule()),
    offerLuaModule(reliabilityModule, async () =>
      (await import('./src/reliability/reliability.js')).createReliabilityModule(),
    ),
    offerLuaModule(jsonModule, async () => (await import('./src/data/data.js')).createJsonModule()),
    offerLuaModule(yamlModule, async () => (await import('./src/data/data.js')).createYamlModule()),
    offerLuaModule(tomlModule, async () => (await import('./src/data/data.js')).createTomlModule()),
    offerLuaModule(iniModule, async () => (await import('./src/data/data.js')).createIniModule()),
    offerLuaModule(cryptoModule, async () => (await import('./src/data/data.js')).createCryptoModule()),
  ],
});
