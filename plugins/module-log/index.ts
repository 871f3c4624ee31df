import { definePlugin, LuaModulesRef } from '@runner/plugin-sdk';
import { logModule } from './src/spec.js';

export { logModule } from './src/spec.js';

/** The `log` Lua module. The implementation loads in setup so `runner --help` stays quick. */
export const plugin = definePlugin({
  id: 'module-log',
  version: '0.1.0',
  description: "Lua module log: structured log lines into the run's log",
  luaModules: [logModule],
  dependsOn: { lua: LuaModulesRef },
  async setup(_ctx, { lua }) {
    const { createLogModule } = await import('./src/log.js');
    lua.provide(logModule, createLogModule());
  },
});
