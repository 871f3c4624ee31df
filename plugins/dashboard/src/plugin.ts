import {
  AgentRegistryRef,
  type ConfigKeySpec,
  DashboardTilesRef,
  definePlugin,
  HttpRouterRef,
  optional,
  Permissions,
  WebSocketHubRef,
  WorkflowEngineRef,
} from '@runner/plugin-sdk';
import { HealthWatch, type SystemAlert, type SystemMetrics } from './health.js';
import { SystemMetricsSource } from './system-metrics.js';
import { routes } from './api.js';
import { agentCounts, executionCounts, ownTiles, sharedRead } from './counts.js';
import { TileBoard } from './tiles.js';

const percent = (fallback: number, help: string): ConfigKeySpec => ({
  schema: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
  default: fallback,
  help,
});

export const plugin = definePlugin({
  id: 'dashboard',
  version: '0.1.0',
  routes,
  description:
    "Dashboard counts, the master's system metrics (GET /api/v1/metrics, system_metrics every 5 s) and system_alert",
  profiles: ['master'],
  provides: [DashboardTilesRef],
  dependsOn: {
    router: HttpRouterRef,
    hub: WebSocketHubRef,
    registry: optional(AgentRegistryRef),
    engine: optional(WorkflowEngineRef),
  },
  config: {
    // service.md section 8.
    'dashboard.metrics_interval': {
      schema: { type: 'number', exclusiveMinimum: 0 },
      default: 5,
      help: 'seconds between system_metrics broadcasts (and how long a sample is reused)',
    },
    'health.cpu_threshold': percent(90, 'master CPU percent above which system_alert fires'),
    'health.memory_threshold': percent(85, 'master memory percent above which system_alert fires'),
    'health.disk_threshold': percent(90, 'percent of the data directory file system above which system_alert fires'),
  },
  async setup(ctx, { router, hub, registry, engine }) {
    // Loaded here, not at import: every command imports every plugin's entry, and the routes bring
    // TypeBox (a one-task `runner run` never needs it).
    const { registerDashboardRoutes } = await import('./routes.js');
    const intervalMs = ctx.config.get<number>('dashboard.metrics_interval') * 1000;
    const thresholds = {
      cpu: ctx.config.get<number>('health.cpu_threshold'),
      memory: ctx.config.get<number>('health.memory_threshold'),
      disk: ctx.config.get<number>('health.disk_threshold'),
    };
    const source = new SystemMetricsSource({ cacheMs: intervalMs - 50, diskPath: ctx.config.dataDir });
    const watch = new HealthWatch(thresholds);
    let latest: SystemMetrics | null = null;
    let alerts: SystemAlert[] = [];

    const sample = async (): Promise<SystemMetrics> => {
      latest = await source.read();
      for (const alert of watch.check(latest)) {
        (alert.state === 'firing' ? ctx.logger.warn : ctx.logger.info)(alert.message, { resource: alert.resource });
        hub.broadcast('system_alert', alert, { permission: Permissions.metricsView });
      }
      alerts = watch.active(latest);
      return latest;
    };

    // Feature plugins add their counts (DashboardTilesRef); the agents and executions counts are
    // tiles like theirs, read once per request however many tiles and fields show them.
    const tiles = new TileBoard();
    ctx.provide(DashboardTilesRef, tiles);
    const agents = registry ? sharedRead(async () => agentCounts(registry)) : undefined;
    const executions = engine ? sharedRead(() => executionCounts(engine)) : undefined;
    for (const tile of ownTiles(agents, executions)) tiles.contribute(tile);

    registerDashboardRoutes(router, {
      tiles,
      agents,
      executions,
      thresholds,
      latest: () => latest,
      alerts: () => alerts,
      metrics: () => (latest ? Promise.resolve(latest) : sample()),
    });

    // Sampled even with no client connected: the alerts are logged and GET /metrics answers from
    // the last sample. One sample at a time: a slow probe skips a tick rather than piling up.
    let busy = false;
    const tick = async () => {
      if (busy) return;
      busy = true;
      try {
        const metrics = await sample();
        hub.broadcast('system_metrics', metrics, { permission: Permissions.metricsView });
      } catch (error) {
        ctx.logger.warn('system metrics could not be read', { error: (error as Error).message });
      } finally {
        busy = false;
      }
    };
    let timer: NodeJS.Timeout | undefined;
    ctx.lifecycle.ready.tapPromise('dashboard', async () => {
      timer = setInterval(() => void tick(), intervalMs);
      timer.unref();
      void tick();
    });
    ctx.onStop(() => clearInterval(timer));
  },
});
