export { bootKernel, pluginsOfProfile, type BootOptions } from './src/kernel.js';
export { discoverPlugins, type DiscoveredPlugin, type DiscoveryOptions } from './src/plugin-discovery.js';
export { orderPlugins } from '@runner/plugin-sdk';
export { loadConfig, resolveDataDir, type ConfigSources } from './src/config.js';
export { createLogger, type KernelLogger, type LogLevel } from './src/logger.js';
export * from './src/errors.js';
export { main, type CliIo } from './src/cli/main.js';
export { kernelVersion, builtinPluginsDir } from './src/paths.js';
