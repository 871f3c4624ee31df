import {
  AgentRegistryRef,
  definePlugin,
  HttpRouterRef,
  MetricsRef,
  optional,
  WorkflowEngineRef,
  type ConfigDeclaration,
} from '@runner/plugin-sdk';
import { METRICS_ROUTE } from './api.js';

const port = (help: string) => ({ schema: { type: 'integer', minimum: 0, maximum: 65535 } as const, help });

export const METRICS_CONFIG: ConfigDeclaration = {
  'metrics.port': port(
    "a listener of its own for scrapers, serving GET /metrics without authentication (sample 9090); unset: only the HTTP port's /metrics",
  ),
  'metrics.bind_address': {
    schema: { type: 'string', minLength: 1 },
    default: '127.0.0.1',
    help: 'address the metrics listener binds (metrics.port, agent.metrics_port)',
  },
  'metrics.agent_poll_interval': {
    schema: { type: 'number', minimum: 1 },
    default: 30,
    help: 'seconds between asking each online agent for its memory and disk bytes (flow_agent_*_bytes)',
  },
  'agent.metrics_port': port(
    "the agent's listener for scrapers, serving its own GET /metrics (sample 9091); unset: none",
  ),
};

/**
 * Prometheus metrics (issue 21, item 4): provides MetricsRef on masters and agents and exports
 * what is declared through it, with the flow_* names of service.md section 4.
 */
export const plugin = definePlugin({
  id: 'metrics',
  version: '0.1.0',
  description: 'Prometheus metrics at /metrics: flow_* of service.md, process, HTTP, runs in flight, and MetricsRef',
  profiles: ['master', 'agent'],
  provides: [MetricsRef],
  plainRoutes: [METRICS_ROUTE],
  config: METRICS_CONFIG,
  dependsOn: {
    router: optional(HttpRouterRef),
    engine: optional(WorkflowEngineRef),
    agents: optional(AgentRegistryRef),
  },
  async setup(ctx, { router, engine, agents }) {
    // prom-client loads here, not at import: every command imports every plugin's entry.
    const [{ MetricsRegistry }, exposition, flow, { requestTimingGuard }, { watchHost }] = await Promise.all([
      import('./registry.js'),
      import('./exposition.js'),
      import('./flow-metrics.js'),
      import('./http-timing.js'),
      import('./host-metrics.js'),
    ]);
    const registry = new MetricsRegistry(ctx.logger);
    ctx.provide(MetricsRef, registry);
    if (router) {
      router.guard(requestTimingGuard(registry));
      exposition.serveOnHttpPort(router, registry);
    }
    if (engine) ctx.onStop(flow.tapRuns(registry, engine));
    if (agents) {
      const pollIntervalMs = ctx.config.get<number>('metrics.agent_poll_interval') * 1000;
      ctx.onStop(flow.watchAgents(registry, agents, { pollIntervalMs, logger: ctx.logger }));
    }
    if (ctx.profile === 'agent')
      watchHost(registry, ctx.config.get<string>('agent.name', '').trim(), ctx.config.dataDir);

    const portKey = ctx.profile === 'agent' ? 'agent.metrics_port' : 'metrics.port';
    const listenPort = ctx.config.get<number | undefined>(portKey);
    if (listenPort !== undefined) {
      const host = ctx.config.get<string>('metrics.bind_address');
      let server: Awaited<ReturnType<typeof exposition.listenSeparately>> | undefined;
      // Once every plugin has declared its metrics: a first scrape sees them all.
      ctx.lifecycle.ready.tapPromise('metrics', async () => {
        server = await exposition.listenSeparately(registry, { host, port: listenPort }, ctx.logger);
      });
      ctx.onStop(() => (server ? exposition.closeServer(server) : undefined));
    }
  },
});
