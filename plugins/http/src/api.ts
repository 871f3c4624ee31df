// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
    description: 'degraded: the master answers, but a part of it works in a reduced way (see degraded)',
  }),
  uptime_seconds: Type.Integer({ minimum: 0 }),
  degraded: Type.Optional(
    Type.Array(
      Type.Object({
        source: Type.String({ description: 'the plugin reporting it (store...)' }),
        reason: Type.String(),
        since: Type.String({ format: 'date-time' }),
      }),
      { description: 'only while status is degraded' },
    ),
  ),
  version: Type.Optional(Type.String({ description: 'only with credentials' })),
  profile: Type.Optional(Type.String({ description: 'only with credentials' })),
  plugins: Type.Optional(Type.Array(Type.String(), { description: 'only with credentials' })),
});

export const getHealth = declareRoute({
  method: 'GET',
  path: '/health',
  summary: 'whether the master is up; with credentials also its version, profile and plugins',
  tags: ['system'],
  permission: Permissions.public,
  responses: { 200: HealthSchema },
});

export const getOpenapiJson = declareRoute({
  method: 'GET',
  path: '/openapi.json',
  summary: 'this OpenAPI 3.1 document',
  tags: ['system'],
  permission: Permissions.public,
  responses: { 200: { description: 'the OpenAPI 3.1 document', contentType: 'application/json' } },
});

export const getWs = declareRoute({
  method: 'GET',
  path: '/ws',
  summary: 'the WebSocket channel of live events (needs an Upgrade: websocket request)',
  tags: ['system'],
  permission: Permissions.workflowView,
  responses: { 426: { description: 'a plain GET; the channel needs a WebSocket upgrade' } },
});

/** Every route above, for the plugin's definition. */
export const routes = [getHealth, getOpenapiJson, getWs];
