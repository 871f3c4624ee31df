import { definePlugin, HttpRouterRef, WebSocketHubRef } from '@runner/plugin-sdk';
import { serverCommand, uiCommand } from './commands.js';
import { HTTP_CONFIG, readHttpConfig } from './config.js';
import { checkExposure, hostGuard } from './network-checks.js';
import { routes } from './api.js';

export const plugin = definePlugin({
  id: 'http',
  version: '0.1.0',
  routes,
  description: 'REST API under /api/v1, JSON errors, health, graceful shutdown, and the WebSocket hub at /api/v1/ws',
  profiles: ['master'],
  provides: [HttpRouterRef, WebSocketHubRef],
  commands: [serverCommand, uiCommand],
  config: HTTP_CONFIG,
  async setup(ctx) {
    const config = readHttpConfig(ctx.config);
    // auth.enabled is the auth plugin's key; without that plugin nothing authenticates.
    checkExposure(
      config.bindAddress,
      {
        authEnabled: ctx.config.get<boolean>('auth.enabled', false),
        tls: config.tls !== undefined,
        insecure: config.insecure,
      },
      ctx.logger,
    );
    // polka, ws and the routes' schemas (TypeBox) load here, not at import: every command, `runner
    // --help` and `runner run` included, imports every plugin's entry.
    const [{ HttpService }, { addOwnRoutes }] = await Promise.all([import('./server.js'), import('./own-routes.js')]);
    const service = new HttpService({
      config,
      logger: ctx.logger,
      events: ctx.events,
      dataDir: ctx.config.dataDir,
      redactor: ctx.redactor,
    });
    service.router.guard(hostGuard(config.allowedHosts));
    ctx.provide(HttpRouterRef, service.router);
    ctx.provide(WebSocketHubRef, service.hub);
    addOwnRoutes(ctx, service.router);
    // Listening waits for ready: every plugin has added its routes by then.
    ctx.lifecycle.ready.tapPromise('http', async () => {
      await service.start();
    });
    ctx.lifecycle.beforeStop.tapPromise('http', () => service.shutdown());
    return { stop: () => service.shutdown() };
  },
});
