import {
  AgentGroupsRef,
  AgentRegistryRef,
  HttpRouterRef,
  SshProfilesRef,
  WebSocketHubRef,
  definePlugin,
  optional,
} from '@runner/plugin-sdk';
import { broadcastAgentUpdates } from './agent-updates.js';
import { agentCommand } from './commands.js';
import { MetricsCache } from './metrics-cache.js';
import { routes } from './api.js';

export const plugin = definePlugin({
  id: 'agents-api',
  version: '0.1.0',
  routes,
  description: 'Agents REST API (/api/v1/agents), WebSocket agent_update, and the runner agent CLI',
  // The routes belong to the master; the commands are offered everywhere (they call a master).
  profiles: ['master'],
  dependsOn: {
    router: HttpRouterRef,
    hub: WebSocketHubRef,
    // Optional so that a master without the agent transport still boots: the routes answer 503.
    registry: optional(AgentRegistryRef),
    // Optional: without the agent-groups plugin only the `?group=` filter is refused.
    groups: optional(AgentGroupsRef),
    // Optional: without the ssh-profiles plugin, installing through a profile answers 503.
    profiles: optional(SshProfilesRef),
  },
  commands: [agentCommand],
  config: {
    // service.md section 8: "Metrics cache duration 5 seconds".
    'agents.metrics_cache': {
      schema: { type: 'number', minimum: 0 },
      default: 5,
      help: "seconds an agent's metrics are answered from cache",
    },
    'agents.sse_heartbeat': {
      schema: { type: 'number', exclusiveMinimum: 0 },
      default: 15,
      help: 'seconds between keep-alive comments on server-sent event streams',
    },
  },
  async setup(ctx, { router, hub, registry, groups, profiles }) {
    // Loaded here, not at import: every command imports every plugin's entry, and the routes bring
    // TypeBox (a one-task `runner run` never needs it).
    const [{ registerAgentRoutes }, { registerInstallRoute }] = await Promise.all([
      import('./routes.js'),
      import('./install/profile-install.js'),
    ]);
    const cacheSeconds = ctx.config.get<number>('agents.metrics_cache');
    const heartbeatSeconds = ctx.config.get<number>('agents.sse_heartbeat');
    const cache = new MetricsCache(cacheSeconds * 1000);
    const streams = { heartbeatMs: Math.max(0.01, heartbeatSeconds) * 1000, maxBufferedBytes: 1024 * 1024 };
    registerAgentRoutes(router, {
      registry,
      groups,
      cache,
      logger: ctx.logger,
      signal: ctx.signal,
      logStream: { ...streams, redactor: ctx.redactor },
    });
    registerInstallRoute(router, {
      profiles,
      redactor: ctx.redactor,
      joinToken: ctx.config.get<string>('agent.join_token', '').trim() || undefined,
      stream: { ...streams, redactor: ctx.redactor, signal: ctx.signal },
    });
    if (!registry) {
      ctx.logger.warn('no agent transport loaded: the /agents routes answer 503');
      return;
    }
    const unsubscribe = broadcastAgentUpdates(registry, hub, (agent) => {
      // A fresh process after a restart or a reconnect has new numbers: do not serve the old ones.
      if (agent.status === 'offline') cache.forget(agent.name);
    });
    const sweeper = setInterval(() => cache.sweep(), 60_000);
    sweeper.unref();
    ctx.onStop(() => {
      unsubscribe();
      clearInterval(sweeper);
    });
  },
});
