// openEventStream on a real HTTP server on loopback, read by a real client socket.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStream, type EventStream, type EventStreamOptions } from './event-stream.js';
import { createRedactor } from './redactor.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server answering each request with one event stream; the stream and the client's answer. */
async function open(options: EventStreamOptions): Promise<{ stream: EventStream; res: IncomingMessage }> {
  let opened!: (stream: EventStream) => void;
  const streamOpened = new Promise<EventStream>((resolve) => (opened = resolve));
  const server = createServer((_req, res: ServerResponse) => opened(openEventStream(res, options)));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const res = await new Promise<IncomingMessage>((resolve, reject) =>
    request({ host: '127.0.0.1', port, path: '/' }, resolve).on('error', reject).end(),
  );
  return { stream: await streamOpened, res };
}

/** Everything the client reads until the server ends the answer. */
async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text;
}

describe('openEventStream', () => {
  it('sends the comment, named and unnamed events masked, timed heartbeats, and an end event at a stop', async () => {
    const redactor = createRedactor();
    redactor.addSecret('s3cr3t-value');
    const stop = new AbortController();
    const { stream, res } = await open({
      heartbeatMs: 20,
      maxBufferedBytes: 1 << 20,
      redactor,
      signal: stop.signal,
      comment: 'test',
    });
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    stream.send({ message: 'token s3cr3t-value' });
    stream.send([1, 2], 'lines');
    const text = readAll(res);
    setTimeout(() => stop.abort(), 100);
    const body = await text;
    expect(body.startsWith('retry: 3000\n: test\n\n')).toBe(true);
    expect(body).toContain('data: {"message":"token ***"}\n\n');
    expect(body).toContain('event: lines\ndata: [1,2]\n\n');
    expect(body).toMatch(/^: heartbeat \d{4}-\d\d-\d\dT[\d:.]+Z\n\n/m);
    expect(body.endsWith('event: end\ndata: {"reason":"the master is stopping"}\n\n')).toBe(true);
    expect(stream.closed).toBe(true);
  });

  it('with stopEvent false, ends at a stop with no event', async () => {
    const stop = new AbortController();
    const { stream, res } = await open({
      heartbeatMs: 60_000,
      maxBufferedBytes: 1 << 20,
      signal: stop.signal,
      stopEvent: false,
    });
    stream.send({ n: 1 });
    const text = readAll(res);
    stop.abort();
    expect(await text).toBe('retry: 3000\n\ndata: {"n":1}\n\n');
  });

  it('drops a client that stopped reading, telling onTooSlow, and runs onClose once', async () => {
    const dropped: number[] = [];
    let closes = 0;
    const { stream, res } = await open({
      heartbeatMs: 60_000,
      maxBufferedBytes: 64 * 1024,
      onTooSlow: (bytes) => dropped.push(bytes),
    });
    stream.onClose(() => closes++);
    res.pause();
    const chunk = 'x'.repeat(64 * 1024);
    // Loopback's socket buffers take a few MiB before anything stays unsent in the answer.
    for (let i = 0; i < 2000 && !stream.closed; i++) {
      stream.send({ chunk });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(stream.closed).toBe(true);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toBeGreaterThan(64 * 1024);
    expect(closes).toBe(1);
  });
});
