import { join } from 'node:path';
import { definePlugin, HttpRouterRef } from '@runner/plugin-sdk';
import { routes } from './api.js';
import { logsCommand } from './logs-command.js';

export const plugin = definePlugin({
  id: 'logs',
  version: '0.1.0',
  routes,
  description: "The master's structured log: GET /api/v1/logs, a live tail (SSE) and runner logs",
  profiles: ['master'],
  dependsOn: { router: HttpRouterRef },
  commands: [logsCommand],
  config: {
    'logs.stream_poll': {
      schema: { type: 'number', exclusiveMinimum: 0 },
      default: 0.5,
      help: 'seconds between checks of the log file for a live tail',
    },
  },
  async setup(ctx, { router }) {
    // Loaded here, not at import: every command imports every plugin's entry, and the routes bring
    // TypeBox (a one-task `runner run` never needs it).
    const { registerLogRoutes } = await import('./routes.js');
    const current = join(ctx.config.dataDir, 'logs', 'runner.log');
    registerLogRoutes(router, {
      files: [`${current}.1`, current],
      current,
      heartbeatMs: 15_000,
      pollMs: ctx.config.get<number>('logs.stream_poll') * 1000,
      signal: ctx.signal,
      logger: ctx.logger,
    });
  },
});
