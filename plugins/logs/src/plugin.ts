import { join } from 'node:path';
import {
  definePlugin,
  HttpRouterRef,
  MASTER_URL_OPTION,
  type CommandContext,
  type CommandInput,
} from '@runner/plugin-sdk';
import { routes } from './api.js';

export const plugin = definePlugin({
  id: 'logs',
  version: '0.1.0',
  routes,
  description: "The master's structured log: GET /api/v1/logs, a live tail (SSE) and runner logs",
  profiles: ['master'],
  dependsOn: { router: HttpRouterRef },
  commands: [
    {
      name: 'logs',
      description: "Show the master's log (through its API); --follow keeps printing new lines",
      options: [
        {
          flags: '--level <level>',
          description: 'lowest level: debug, info, warn, error',
          choices: ['debug', 'info', 'warn', 'error'],
        },
        { flags: '--since <duration>', description: 'only lines from this long ago: 15m, 2h, 1d' },
        { flags: '--limit <n>', description: 'most recent lines (default 500, at most 5000)' },
        { flags: '-f, --follow', description: 'keep printing lines as the master writes them (Ctrl-C stops)' },
        {
          flags: '--output <format>',
          description: 'text or json (one entry a line)',
          default: 'text',
          choices: ['text', 'json'],
        },
        MASTER_URL_OPTION,
      ],
      run: async (input: CommandInput, ctx: CommandContext) =>
        (await import('./logs-command.js')).logsCommand(input, ctx),
    },
  ],
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
