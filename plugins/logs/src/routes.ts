import {
  defineRoute,
  InvalidInputError,
  openEventStream,
  parseDuration,
  Permissions,
  STREAMED,
  type HttpRouter,
  type Logger,
} from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { follow, LEVELS, matches, readEntries, type Level, type LogEntry } from './log-file.js';

const LevelSchema = Type.Union(
  LEVELS.map((l) => Type.Literal(l)),
  { description: 'lowest level shown: debug, info, warn or error' },
);

export const LogEntrySchema = Type.Object({
  timestamp: Type.String({ description: 'ISO 8601 UTC' }),
  level: LevelSchema,
  message: Type.String(),
  fields: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'context: plugin, workflow, agent…' }),
  ),
});

const MAX_LIMIT = 5000;

export interface LogRoutesOptions {
  /** The log file, then the rotated one: `[runner.log.1, runner.log]` in reading order. */
  files: string[];
  /** The file being written. */
  current: string;
  heartbeatMs: number;
  pollMs: number;
  /** Stops every stream when the master stops. */
  signal: AbortSignal;
  logger: Logger;
}

/** `since` as a duration back from now ("15m", "2h", "90" seconds), named in the error when wrong. */
function sinceMs(since: string | undefined, now = Date.now()): number | undefined {
  if (since === undefined || since === '') return undefined;
  try {
    return now - parseDuration(/^\d+(\.\d+)?$/.test(since) ? Number(since) : since);
  } catch (error) {
    throw new InvalidInputError(`since: ${(error as Error).message} (a duration such as 15m, 2h or 1d)`, {
      field: 'since',
    });
  }
}

export function registerLogRoutes(router: HttpRouter, options: LogRoutesOptions): void {
  router.add(
    defineRoute({
      method: 'GET',
      path: '/logs',
      summary: "The master's structured log, newest last, filtered by level and age",
      tags: ['logs'],
      permission: Permissions.logsView,
      query: Type.Object(
        {
          level: Type.Optional(LevelSchema),
          since: Type.Optional(
            Type.String({ description: 'a duration back from now: 15m, 2h, 1d (default: all kept)' }),
          ),
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
      handler: ({ query }) =>
        readEntries(options.files, {
          level: query.level as Level | undefined,
          sinceMs: sinceMs(query.since),
          limit: query.limit ?? 500,
        }),
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/logs/stream',
      summary: "The master's log as it is written, as server-sent events (one `data:` entry each)",
      tags: ['logs'],
      permission: Permissions.logsView,
      streaming: true,
      query: Type.Object({ level: Type.Optional(LevelSchema) }, { additionalProperties: false }),
      responses: { 200: { description: 'one `data:` line per log entry', contentType: 'text/event-stream' } },
      handler: ({ query, raw }) => {
        const level = query.level as Level | undefined;
        const stream = openEventStream(raw.res, {
          heartbeatMs: options.heartbeatMs,
          // A client that stops reading is dropped rather than buffered for without bound.
          maxBufferedBytes: 1024 * 1024,
          signal: options.signal,
          // `runner logs --follow` reads every `data:` as a log entry: the stream just ends.
          stopEvent: false,
          comment: 'log of the master',
        });
        const stop = new AbortController();
        stream.onClose(() => stop.abort());
        if (stream.closed) return STREAMED;
        const send = (entry: LogEntry) => {
          if (matches(entry, { level })) stream.send(entry);
        };
        follow(options.current, send, stop.signal, options.pollMs).catch((error: unknown) => {
          options.logger.warn('log stream stopped', { error: (error as Error).message });
          stream.end();
        });
        return STREAMED;
      },
    }),
  );
}
