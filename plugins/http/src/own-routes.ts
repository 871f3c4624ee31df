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
      summary: 'whether the master is up; with credentials also its version, profile and plugins',
      tags: ['system'],
      permission: Permissions.public,
      responses: { 200: HealthSchema },
      // Anyone may ask whether the master is up; its version and plugins tell an attacker which
      // known holes to try, so only a caller with credentials hears them.
      handler: (request) => {
        const up = { status: 'ok' as const, uptime_seconds: Math.floor((Date.now() - startedAt) / 1000) };
        if (!request.principal) return up;
        return { ...up, version: ctx.kernelVersion, profile: ctx.profile, plugins: ctx.plugins.map((p) => p.id) };
      },
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
  uptime_seconds: Type.Integer({ minimum: 0 }),
  version: Type.Optional(Type.String({ description: 'only with credentials' })),
  profile: Type.Optional(Type.String({ description: 'only with credentials' })),
  plugins: Type.Optional(Type.Array(Type.String(), { description: 'only with credentials' })),
});
