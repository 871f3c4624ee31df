import { definePlugin, LuaModulesRef, optional, StoreRef } from '@runner/plugin-sdk';
import { stateModule } from './src/spec.js';

export { stateModule } from './src/spec.js';

/**
 * The `state` Lua module, kept in the store. The store is optional because the agent profile has
 * none: there the module still exists and its functions say why they cannot work.
 */
export const plugin = definePlugin({
  id: 'module-state',
  version: '0.1.0',
  description: 'Lua module state: durable key/value state per workflow, task or globally',
  luaModules: [stateModule],
  dependsOn: { lua: LuaModulesRef, store: optional(StoreRef) },
  async setup(_ctx, { lua, store }) {
    const { createStateModule, STATE_MIGRATIONS } = await import('./src/state.js');
    if (store) await store.migrate('module-state', STATE_MIGRATIONS);
    lua.provide(stateModule, createStateModule(store));
  },
});
