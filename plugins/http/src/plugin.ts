import { definePlugin, HttpRouterRef, reply, WebSocketHubRef, type PluginContext } from '@runner/plugin-sdk';
import { serverCommand, uiCommand } from './commands.js';
import { HTTP_CONFIG, readHttpConfig } from './config.js';
import type { ApiRouter } from './router.js';

export const plugin = definePlugin({
  id: 'http',
  version: '0.1.0',
  description: 'REST API under /api/v1, JSON errors, health, graceful shutdown, and the WebSocket hub at /api/v1/ws',
  profiles: ['master'],
  provides: [HttpRouterRef, WebSocketHubRef],
  commands: [serverCommand, uiCommand],
  config: HTTP_CONFIG,
  async setup(ctx) {
    const config = readHttpConfig(ctx.config);
    // polka and ws load here, not at import: `runner --help` imports every plugin's entry.
    const { HttpService } = await import('./server.js');
    const service = new HttpService({
      config,
      logger: ctx.logger,
      events: ctx.events,
      dataDir: ctx.config.dataDir,
      redactor: ctx.redactor,
    });
    ctx.provide(HttpRouterRef, service.router);
    ctx.provide(WebSocketHubRef, service.hub);
    addOwnRoutes(ctx, service.router);
    // Listening waits for ready: every plugin has added its routes by then.
    ctx.hooks.ready.tapPromise('http', async () => {
      await service.start();
    });
    ctx.hooks.beforeStop.tapPromise('http', () => service.shutdown());
    return { stop: () => service.shutdown() };
  },
});

function addOwnRoutes(ctx: PluginContext, router: ApiRouter): void {
  const startedAt = Date.now();
  router.route('GET', '/health', () => ({
    status: 'ok',
    version: ctx.kernelVersion,
    uptime_seconds: Math.floor((Date.now() - startedAt) / 1000),
    profile: ctx.profile,
    plugins: ctx.plugins.map((p) => p.id),
  }));
  // A plain GET of the WebSocket endpoint (the upgrade never reaches the router).
  router.route('GET', '/ws', () =>
    reply(
      426,
      { error: { code: 'upgrade_required', message: 'GET /api/v1/ws needs a WebSocket upgrade (Upgrade: websocket)' } },
      { upgrade: 'websocket', connection: 'Upgrade' },
    ),
  );
}
