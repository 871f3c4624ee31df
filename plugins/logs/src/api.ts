// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { LEVELS } from './log-file.js';

const LevelSchema = Type.Union(
  LEVELS.map((l) => Type.Literal(l)),
  { description: 'lowest level shown: debug, info, warn or error' },
);
const MAX_LIMIT = 5000;
const LogEntrySchema = Type.Object({
  timestamp: Type.String({ description: 'ISO 8601 UTC' }),
  level: LevelSchema,
  message: Type.String(),
  fields: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'context: plugin, workflow, agent…' }),
  ),
});

export const getLogs = declareRoute({
  method: 'GET',
  path: '/logs',
  summary: "The master's structured log, newest last, filtered by level and age",
  tags: ['logs'],
  permission: Permissions.logsView,
  query: Type.Object(
    {
      level: Type.Optional(LevelSchema),
      since: Type.Optional(Type.String({ description: 'a duration back from now: 15m, 2h, 1d (default: all kept)' })),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: 'most recent entries (default 500)' }),
      ),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: Type.Object({
      entries: Type.Array(LogEntrySchema),
      truncated: Type.Boolean({ description: 'older matching entries were left out (raise limit)' }),
    }),
  },
});

export const getLogsStream = declareRoute({
  method: 'GET',
  path: '/logs/stream',
  summary: "The master's log as it is written, as server-sent events (one `data:` entry each)",
  tags: ['logs'],
  permission: Permissions.logsView,
  streaming: true,
  query: Type.Object({ level: Type.Optional(LevelSchema) }, { additionalProperties: false }),
  responses: { 200: { description: 'one `data:` line per log entry', contentType: 'text/event-stream' } },
});

/** Every route above, for the plugin's definition. */
export const routes = [getLogs, getLogsStream];
