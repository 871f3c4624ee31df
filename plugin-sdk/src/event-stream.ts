import type { ServerResponse } from 'node:http';
import type { Redactor } from './redactor.js';

export interface EventStreamOptions {
  /** Between `: heartbeat` comments, which keep proxies from closing an idle stream. */
  heartbeatMs: number;
  /** Unsent bytes after which a client that stopped reading is dropped rather than buffered for. */
  maxBufferedBytes: number;
  /** Masks registered secrets in every event (the kernel's one redactor). */
  redactor?: Redactor;
  /** Ends the stream (with an `end` event unless `stopEvent` is false) when aborted: the kernel is stopping. */
  signal?: AbortSignal;
  /**
   * False: the stream ends without an event when `signal` aborts, for a stream whose clients read
   * every `data:` as one kind of entry (`runner logs --follow`). Default true.
   */
  stopEvent?: boolean;
  /** Told when a client that stopped reading is dropped (the bytes it left unsent), to log it. */
  onTooSlow?(bufferedBytes: number): void;
  /** A comment sent first, saying what the stream is. */
  comment?: string;
}

/** A server-sent-event answer opened by `openEventStream`. */
export interface EventStream {
  /** One event: `data` as JSON, with an `event:` name when given (default: a `message` event). */
  send(data: unknown, event?: string): void;
  /** A last event, when given, then the end of the answer. */
  end(data?: unknown, event?: string): void;
  /** Runs once when the stream ends, for whatever reason (client gone, `end`, signal, too slow). */
  onClose(callback: () => void): void;
  readonly closed: boolean;
}

/**
 * Starts a `text/event-stream` answer on `res` (headers not yet sent) for a route declared with
 * `streaming: true`: headers that keep proxies from buffering, heartbeats, redaction of every
 * event, and a bound on what a slow client may hold unsent.
 */
export function openEventStream(res: ServerResponse, options: EventStreamOptions): EventStream {
  const closers: (() => void)[] = [];
  let closed = false;
  const redact = (text: string) => (options.redactor ? options.redactor.redactText(text) : text);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    options.signal?.removeEventListener('abort', onStop);
    for (const callback of closers.splice(0)) callback();
  };
  const write = (chunk: string) => {
    if (closed || res.destroyed || res.writableEnded) return;
    if (res.writableLength > options.maxBufferedBytes) {
      options.onTooSlow?.(res.writableLength);
      close();
      res.destroy();
      return;
    }
    res.write(chunk);
  };
  const frame = (data: unknown, event?: string) =>
    `${event ? `event: ${event}\n` : ''}data: ${redact(JSON.stringify(data))}\n\n`;
  const stream: EventStream = {
    send: (data, event) => write(frame(data, event)),
    end(data, event) {
      if (closed) return;
      if (data !== undefined || event) write(frame(data ?? {}, event));
      close();
      if (!res.destroyed && !res.writableEnded) res.end();
    },
    onClose: (callback) => (closed ? callback() : void closers.push(callback)),
    get closed() {
      return closed;
    },
  };
  const onStop = () =>
    options.stopEvent === false ? stream.end() : stream.end({ reason: 'the master is stopping' }, 'end');

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx buffers responses unless told otherwise, which would hold events back.
    'x-accel-buffering': 'no',
  });
  res.write(`retry: 3000\n${options.comment ? `: ${options.comment.replace(/\n/g, ' ')}\n` : ''}\n`);
  // The time tells someone reading the raw stream (curl) that it is live; EventSource ignores comments.
  const heartbeat = setInterval(() => write(`: heartbeat ${new Date().toISOString()}\n\n`), options.heartbeatMs);
  heartbeat.unref();
  res.on('close', close);
  if (options.signal?.aborted) onStop();
  else options.signal?.addEventListener('abort', onStop, { once: true });
  return stream;
}

/** One server-sent event as a client reads it: its name (`message` when it has none) and its JSON data. */
export interface ReadEvent {
  event: string;
  data: unknown;
}

/**
 * The events of a `text/event-stream` answer (a master client's `request`) as they arrive;
 * comments (heartbeats) and events without data are skipped. Ends when the answer does.
 */
export async function* readEventStream(response: Response): AsyncIterable<ReadEvent> {
  if (!response.body) return;
  let buffer = '';
  // A reader, not `for await`: the DOM's ReadableStream type (the web UI type-checks this file)
  // declares no async iterator.
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += value;
      const frames = buffer.split('\n\n');
      buffer = frames.pop() ?? '';
      for (const frame of frames) {
        const lines = frame.split('\n');
        const data = lines
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n');
        const named = lines.find((line) => line.startsWith('event: '));
        if (data) yield { event: named ? named.slice(7) : 'message', data: JSON.parse(data) as unknown };
      }
    }
  } finally {
    // A caller that stops reading early (it has its `done`) closes the answer's stream.
    await reader.cancel().catch(() => undefined);
  }
}
