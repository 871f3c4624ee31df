import { AgentGroupsRef, HttpRouterRef, definePlugin, optional, StoreRef } from '@runner/plugin-sdk';
import { agentGroupCommand } from './commands.js';

/**
 * Agent groups: stored by the master, served at /api/v1/agent-groups, offered to the engine (a
 * `delegate_to: group:<name>` target) and the agents API (`?group=`) through AgentGroupsRef.
 */
export const plugin = definePlugin({
  id: 'agent-groups',
  version: '0.1.0',
  description: 'Agent groups: named sets of agents, their REST API and CLI; delegate_to group:<name>',
  // The store and the routes belong to the master; the commands are offered everywhere (they call one).
  profiles: ['master'],
  provides: [AgentGroupsRef],
  dependsOn: { store: StoreRef, router: optional(HttpRouterRef) },
  commands: [agentGroupCommand],
  async setup(ctx, { store, router }) {
    const [{ AgentGroupStore }, { registerGroupRoutes }] = await Promise.all([
      import('./group-store.js'),
      import('./routes.js'),
    ]);
    const groups = new AgentGroupStore(store);
    await groups.open();
    ctx.provide(AgentGroupsRef, groups);
    if (router) registerGroupRoutes(router, groups);
  },
});
