import * as api from './api.js';
import {
  serve,
  InvalidInputError,
  openEventStream,
  parseDuration,
  STREAMED,
  type HttpRouter,
  type Logger,
} from '@runner/plugin-sdk';

import { follow, matches, readEntries, type Level, type LogEntry } from './log-file.js';

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
    serve(api.getLogs, ({ query }) =>
      readEntries(options.files, {
        level: query.level as Level | undefined,
        sinceMs: sinceMs(query.since),
        limit: query.limit ?? 500,
      }),
    ),
  );

  router.add(
    serve(api.getLogsStream, ({ query, raw }) => {
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
    }),
  );
}
