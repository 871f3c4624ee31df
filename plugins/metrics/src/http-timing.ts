import type { Guard, MetricsService } from '@runner/plugin-sdk';

/** From a millisecond (a cached list) to ten seconds (a long wait on a run). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/**
 * Times every answer of the HTTP port through the router's guard chain (plugins/http, "Guards"):
 * the guard runs first for every door and `onFinish` hears the final status, so the route label
 * is the declared path (`/api/v1/agents/:name`, `/` for the UI), never the URL asked for. Streams
 * (server-sent events, the WebSocket) are left out: their time is how long a client stayed.
 */
export function requestTimingGuard(metrics: MetricsService): Guard {
  const duration = metrics.histogram({
    name: 'runner_http_request_duration_seconds',
    help: 'seconds from the start of the routing of a request to the end of its answer',
    labelNames: ['method', 'route', 'status'],
    buckets: REQUEST_BUCKETS,
    // Routes times methods times statuses: a few hundred declared routes, a handful of statuses each.
    maxSeries: 5000,
  });
  return {
    name: 'metrics.request-timing',
    // Before rate limiting (50) and authentication (100), so refused requests are timed too.
    order: 10,
    check(context) {
      const { kind, method, path } = context.route;
      if (kind === 'sse' || kind === 'websocket') return;
      const started = process.hrtime.bigint();
      context.onFinish((status) => {
        duration.observe({ method, route: path, status }, Number(process.hrtime.bigint() - started) / 1e9);
      });
    },
  };
}
