import type { ServerResponse } from 'node:http';
import {
  isRunnerError,
  openEventStream,
  type AgentLogEntry,
  type AgentRegistry,
  type EventStreamOptions,
  type Logger,
} from '@runner/plugin-sdk';

/** Heartbeat interval, the bound on what a slow client may hold unsent, and the kernel's redactor. */
export type LogStreamOptions = Pick<EventStreamOptions, 'heartbeatMs' | 'maxBufferedBytes' | 'redactor'>;

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
  const stream = openEventStream(res, {
    ...options,
    signal: stop,
    comment: `log stream of agent ${name}`,
    onTooSlow: (bufferedBytes) =>
      logger.warn('log stream client too slow; dropping it', { agent: name, buffered_bytes: bufferedBytes }),
  });
  // Whatever ends the answer ends the agent's stream too.
  const controller = new AbortController();
  stream.onClose(() => controller.abort());
  if (stream.closed) return;
  const onEntry = (entry: AgentLogEntry): void =>
    stream.send({ timestamp: entry.timestamp, level: entry.level, message: entry.message });
  registry.streamLogs(name, onEntry, controller.signal).then(
    () => stream.end({ reason: `the log stream of agent ${name} ended` }, 'end'),
    (error: unknown) => {
      if (controller.signal.aborted) return;
      const code = isRunnerError(error) ? error.code : 'internal_error';
      const message = error instanceof Error ? error.message : String(error);
      if (!isRunnerError(error)) logger.error('agent log stream failed', { agent: name, error: message });
      stream.end({ code, message }, 'error');
    },
  );
}
