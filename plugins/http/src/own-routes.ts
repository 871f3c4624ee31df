import * as api from './api.js';
import { serve, reply, type PluginContext } from '@runner/plugin-sdk';

import type { ApiRouter } from './router.js';

/** The HTTP plugin's own routes: health, the OpenAPI document and the plain GET of /ws. */
export function addOwnRoutes(ctx: PluginContext, router: ApiRouter): void {
  const startedAt = Date.now();
  router.add(
    // Anyone may ask whether the master is up; its version and plugins tell an attacker which
    // known holes to try, so only a caller with credentials hears them.
    serve(api.getHealth, (request) => {
      const uptime = Math.floor((Date.now() - startedAt) / 1000);
      const degraded = router.conditions();
      const up =
        degraded.length === 0
          ? { status: 'ok' as const, uptime_seconds: uptime }
          : { status: 'degraded' as const, uptime_seconds: uptime, degraded };
      if (!request.principal) return up;
      return { ...up, version: ctx.kernelVersion, profile: ctx.profile, plugins: ctx.plugins.map((p) => p.id) };
    }),
  );
  // Built on first request: every plugin has added its routes by then, and startup does not pay for it.
  let document: string | undefined;
  router.add(
    serve(api.getOpenapiJson, () => {
      document ??= JSON.stringify(router.openApi(ctx.kernelVersion));
      return JSON.parse(document) as unknown;
    }),
  );
  // A plain GET of the WebSocket endpoint (the upgrade never reaches the router).
  router.add(
    serve(api.getWs, () =>
      reply(
        426,
        {
          error: {
            code: 'upgrade_required',
            message: 'GET /api/v1/ws needs a WebSocket upgrade (Upgrade: websocket)',
          },
        },
        { upgrade: 'websocket', connection: 'Upgrade' },
      ),
    ),
  );
}
