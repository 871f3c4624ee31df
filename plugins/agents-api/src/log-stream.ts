import type { ServerResponse } from 'node:http';
import { isRunnerError, type AgentLogEntry, type AgentRegistry, type Logger, type Redactor } from '@runner/plugin-sdk';

export interface LogStreamOptions {
  /** Seconds between `: heartbeat` comments, which keep proxies from closing an idle stream. */
  heartbeatMs: number;
  /** Unsent bytes after which a client is dropped rather than buffered for without bound. */
  maxBufferedBytes: number;
  /** Masks registered secrets in every event sent (the kernel's one redactor). */
  redactor?: Redactor;
}

/**
 * Streams an agent's log as server-sent events on `res` (headers not yet sent): one
 * `data: {"timestamp","level","message"}` event per entry, `: heartbeat` comments in between.
 * Ends when the client disconnects, `stop` aborts (kernel stopping), or the agent's stream ends;
 * the last two are announced with an `end` or `error` event so that a client can tell them from a
 * network failure.
 */
export function streamAgentLogs(
  registry: AgentRegistry,
  name: string,
  res: ServerResponse,
  stop: AbortSignal,
  options: LogStreamOptions,
  logger: Logger,
): void {
  const redact = (json: string): string => (options.redactor ? options.redactor.redactText(json) : json);
  const controller = new AbortController();
  const finish = (event?: { type: string; data: unknown }): void => {
    if (controller.signal.aborted) return;
    controller.abort();
    clearInterval(heartbeat);
    stop.removeEventListener('abort', onStop);
    if (!res.destroyed && !res.writableEnded) {
      if (event) res.write(`event: ${event.type}\ndata: ${redact(JSON.stringify(event.data))}\n\n`);
      res.end();
    }
  };
  const write = (chunk: string): void => {
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength > options.maxBufferedBytes) {
      logger.warn('log stream client too slow; dropping it', { agent: name, buffered_bytes: res.writableLength });
      finish();
      res.destroy();
      return;
    }
    res.write(chunk);
  };
  const onStop = (): void => finish({ type: 'end', data: { reason: 'the master is stopping' } });

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx buffers responses unless told otherwise, which would hold entries back.
    'x-accel-buffering': 'no',
  });
  res.write(`retry: 3000\n: log stream of agent ${name}\n\n`);
  const heartbeat = setInterval(() => write(`: heartbeat ${new Date().toISOString()}\n\n`), options.heartbeatMs);
  heartbeat.unref();
  res.on('close', () => finish());
  if (stop.aborted) return onStop();
  stop.addEventListener('abort', onStop, { once: true });

  const onEntry = (entry: AgentLogEntry): void => {
    write(
      `data: ${redact(JSON.stringify({ timestamp: entry.timestamp, level: entry.level, message: entry.message }))}\n\n`,
    );
  };
  registry.streamLogs(name, onEntry, controller.signal).then(
    () => finish({ type: 'end', data: { reason: `the log stream of agent ${name} ended` } }),
    (error: unknown) => {
      if (controller.signal.aborted) return;
      const code = isRunnerError(error) ? error.code : 'internal_error';
      const message = error instanceof Error ? error.message : String(error);
      if (!isRunnerError(error)) logger.error('agent log stream failed', { agent: name, error: message });
      finish({ type: 'error', data: { code, message } });
    },
  );
}
