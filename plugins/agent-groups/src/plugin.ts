import {
  AgentGroupsRef,
  ClusterRef,
  HttpRouterRef,
  definePlugin,
  optional,
  StoreRef,
  WebSocketHubRef,
} from '@runner/plugin-sdk';
import { agentGroupCommand } from './commands.js';
import { routes } from './api.js';

/**
 * Agent groups: stored by the master, served at /api/v1/agent-groups, offered to the engine (a
 * `delegate_to: group:<name>` target) and the agents API (`?group=`) through AgentGroupsRef.
 */
export const plugin = definePlugin({
  id: 'agent-groups',
  version: '0.1.0',
  routes,
  description: 'Agent groups: named sets of agents, their REST API and CLI; delegate_to group:<name>',
  // The store and the routes belong to the master; the commands are offered everywhere (they call one).
  profiles: ['master'],
  provides: [AgentGroupsRef],
  dependsOn: {
    store: StoreRef,
    router: optional(HttpRouterRef),
    hub: optional(WebSocketHubRef),
    // Several masters on one store: each keeps the groups in memory; a change here reaches theirs.
    cluster: optional(ClusterRef),
  },
  async schema() {
    const { GROUP_MIGRATIONS } = await import('./group-store.js');
    return [{ owner: 'agent-groups', migrations: GROUP_MIGRATIONS }];
  },
  commands: [agentGroupCommand],
  async setup(ctx, { store, router, hub, cluster }) {
    const [{ AgentGroupStore }, { registerGroupRoutes }] = await Promise.all([
      import('./group-store.js'),
      import('./routes.js'),
    ]);
    // Open pages reload their group lists on it (groups change through the API only).
    const groups = new AgentGroupStore(store, (name, change, members) => {
      hub?.broadcast('agent_group_update', { name, change, members });
      cluster?.publish('agent-groups.changed', { name });
    });
    await groups.open();
    const off = cluster?.subscribe<{ name: string }>('agent-groups.changed', ({ name }) => {
      groups
        .refresh(name)
        .catch((error: Error) =>
          ctx.logger.warn(`reading group ${name} changed by another master failed: ${error.message}`),
        );
    });
    if (off) ctx.onStop(off);
    ctx.provide(AgentGroupsRef, groups);
    if (router) registerGroupRoutes(router, groups);
  },
});
