import * as api from './api.js';
import { serve, type HttpRouter, type Principal } from '@runner/plugin-sdk';
import type { Static } from '@runner/plugin-sdk/schema';
import { DashboardSchema } from './schemas.js';
import type { HealthThresholds, SystemAlert, SystemMetrics } from './health.js';
import type { AgentCounts, ExecutionCounts } from './counts.js';
import type { TileBoard } from './tiles.js';

type Dashboard = Static<typeof DashboardSchema>;

export interface DashboardSources {
  tiles: TileBoard;
  /** Absent when the master has no agent registry / no engine. */
  agents?: () => Promise<AgentCounts>;
  executions?: () => Promise<ExecutionCounts>;
  /** The latest sample (the one broadcast), taking one when there is none yet. */
  metrics(): Promise<SystemMetrics>;
  latest(): SystemMetrics | null;
  alerts(): SystemAlert[];
  thresholds: HealthThresholds;
}

export function registerDashboardRoutes(router: HttpRouter, sources: DashboardSources): void {
  router.add(serve(api.getDashboard, (request): Promise<Dashboard> => dashboard(sources, request.principal)));
  router.add(serve(api.getMetrics, () => sources.metrics()));
}

export async function dashboard(sources: DashboardSources, principal: Principal | undefined): Promise<Dashboard> {
  const [tiles, agents, executions] = await Promise.all([
    sources.tiles.read(principal),
    sources.agents?.(),
    sources.executions?.(),
  ]);
  return {
    tiles,
    ...(agents ? { agents } : {}),
    ...(executions ? { executions } : {}),
    system: sources.latest(),
    alerts: sources.alerts(),
    thresholds: sources.thresholds,
  };
}
