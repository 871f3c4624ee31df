import { Permissions } from '@runner/plugin-sdk';

export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics` on the master's HTTP port: a plain route (Prometheus' text, not JSON), declared
 * for the OpenAPI document (`plainRoutes`) and served by exposition.ts.
 */
export const METRICS_ROUTE = {
  method: 'GET',
  path: METRICS_PATH,
  summary: 'metrics for Prometheus (text exposition format 0.0.4)',
  permission: Permissions.metricsView,
} as const;
