import {
  definePlugin,
  LuaModulesRef,
  optional,
  StateForwarderRef,
  StateServiceRef,
  StoreRef,
} from '@runner/plugin-sdk';
import { stateModule } from './src/spec.js';

export { stateModule } from './src/spec.js';

/**
 * The `state` Lua module and the state service behind it. With a store (master, embedded) the
 * state lives there and the master's agent transport serves its agents from it; on an agent (no
 * store) every call is forwarded to the master over the agent's stream.
 */
export const plugin = definePlugin({
  id: 'module-state',
  version: '0.1.0',
  description: 'Lua module state: durable key/value state per workflow, task or globally',
  luaModules: [stateModule],
  provides: [StateServiceRef],
  dependsOn: { lua: LuaModulesRef, store: optional(StoreRef), forwarder: optional(StateForwarderRef) },
  async schema() {
    const { STATE_MIGRATIONS } = await import('./src/store-state.js');
    return [{ owner: 'module-state', migrations: STATE_MIGRATIONS }];
  },
  async setup(ctx, { lua, store, forwarder }) {
    const { createStateModule } = await import('./src/state.js');
    let service;
    if (store) {
      const { createStoreState, STATE_MIGRATIONS } = await import('./src/store-state.js');
      await store.migrate('module-state', STATE_MIGRATIONS);
      service = createStoreState(store);
    } else {
      const { createForwardedState, unavailableState } = await import('./src/forwarded-state.js');
      service = forwarder ? createForwardedState(forwarder) : unavailableState();
    }
    ctx.provide(StateServiceRef, service);
    lua.provide(stateModule, createStateModule(service));
  },
});
