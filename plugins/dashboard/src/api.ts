// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { DashboardSchema, SystemMetricsSchema } from './schemas.js';

export const getDashboard = declareRoute({
  method: 'GET',
  path: '/dashboard',
  summary: "The dashboard's counts, the 10 latest executions and the master's latest metrics",
  permission: Permissions.metricsView,
  responses: { 200: DashboardSchema },
});

export const getMetrics = declareRoute({
  method: 'GET',
  path: '/metrics',
  summary: "The master's system metrics (CPU, memory, disk, network), as system_metrics broadcasts them",
  permission: Permissions.metricsView,
  responses: { 200: SystemMetricsSchema },
});

/** Every route above, for the plugin's definition. */
export const routes = [getDashboard, getMetrics];
