import { defineRoute, Permissions, reply, type PluginContext } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import type { ApiRouter } from './router.js';

/** The HTTP plugin's own routes: health, the OpenAPI document and the plain GET of /ws. */
export function addOwnRoutes(ctx: PluginContext, router: ApiRouter): void {
  const startedAt = Date.now();
  router.add(
    defineRoute({
      method: 'GET',
      path: '/health',
      summary: 'whether the master is up, its version and plugins',
      tags: ['system'],
      permission: Permissions.public,
      responses: { 200: HealthSchema },
      handler: () => ({
        status: 'ok',
        version: ctx.kernelVersion,
        uptime_seconds: Math.floor((Date.now() - startedAt) / 1000),
        profile: ctx.profile,
        plugins: ctx.plugins.map((p) => p.id),
      }),
    }),
  );
  // Built on first request: every plugin has added its routes by then, and startup does not pay for it.
  let document: string | undefined;
  router.add(
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      summary: 'this OpenAPI 3.1 document',
      tags: ['system'],
      permission: Permissions.public,
      responses: { 200: { description: 'the OpenAPI 3.1 document', contentType: 'application/json' } },
      handler: () => {
        document ??= JSON.stringify(router.openApi(ctx.kernelVersion));
        return JSON.parse(document) as unknown;
      },
    }),
  );
  // A plain GET of the WebSocket endpoint (the upgrade never reaches the router).
  router.add(
    defineRoute({
      method: 'GET',
      path: '/ws',
      summary: 'the WebSocket channel of live events (needs an Upgrade: websocket request)',
      tags: ['system'],
      permission: Permissions.workflowView,
      responses: { 426: { description: 'a plain GET; the channel needs a WebSocket upgrade' } },
      handler: () =>
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
    }),
  );
}

const HealthSchema = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  uptime_seconds: Type.Integer({ minimum: 0 }),
  profile: Type.String(),
  plugins: Type.Array(Type.String()),
});
