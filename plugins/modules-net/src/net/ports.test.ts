import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { portOpen, waitForPort } from './ports.js';
import { callContext, closedPort } from './test-support.js';

const servers: Server[] = [];

function listen(port = 0): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.end());
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : port });
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => (s.listening ? close(s) : undefined)));
});

describe('net.port_open', () => {
  it('is true for a listening port and false for a closed one', async () => {
    const { call, lines } = callContext();
    const { port } = await listen();
    expect(await portOpen(call, '127.0.0.1', port, null)).toBe(true);
    const closed = await closedPort();
    expect(await portOpen(call, '127.0.0.1', closed, '2s')).toBe(false);
    expect(lines.map((l) => l.message)).toContain(
      `net.port_open: 127.0.0.1:${closed} is not open: connect ECONNREFUSED 127.0.0.1:${closed}`,
    );
  });

  it('resolves a host name and accepts the port as a string', async () => {
    const { call } = callContext();
    const { port } = await listen();
    expect(await portOpen(call, 'localhost', String(port), 1)).toBe(true);
  });

  it.each([
    [null, 80, null, 'net.port_open: argument 1 must be a host name or address string, got nil'],
    ['127.0.0.1', 0, null, 'net.port_open: argument 2 must be a port number 1-65535, got number 0'],
    ['127.0.0.1', 70000, null, 'net.port_open: argument 2 must be a port number 1-65535, got number 70000'],
    ['127.0.0.1', 'http', null, 'net.port_open: argument 2 must be a port number 1-65535, got string "http"'],
    ['127.0.0.1', 80, 'later', 'net.port_open: timeout (argument 3) must be a duration'],
  ])('rejects bad arguments (%j, %j, %j)', async (host, port, timeout, message) => {
    const { call } = callContext();
    await expect(portOpen(call, host, port, timeout)).rejects.toThrow(message);
  });
});

describe('net.wait_for_port', () => {
  it('returns once the port opens', async () => {
    const port = await closedPort();
    let opening: Promise<unknown> | undefined;
    // The first failed attempt opens the port: the wait must then notice it on a later attempt.
    const { call, lines } = callContext({
      onLine: (line) => {
        if (line.message.includes('is not open yet')) opening ??= listen(port);
      },
    });
    const waited = await waitForPort(call, '127.0.0.1', port, { timeout: '20s', interval: '20ms' });
    expect(opening).toBeDefined();
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThan(20);
    expect(lines.filter((l) => l.message.includes('is not open yet')).length).toBeGreaterThanOrEqual(1);
  });

  it('returns at once when the port is already open', async () => {
    const { call, lines } = callContext();
    const { port } = await listen();
    expect(await waitForPort(call, '127.0.0.1', port, null)).toBeLessThan(5);
    expect(lines).toEqual([]);
  });

  it('waits for a port to close with state = "closed"', async () => {
    const { server, port } = await listen();
    let closing: Promise<void> | undefined;
    const { call } = callContext({
      onLine: (line) => {
        if (line.message.includes('is not closed yet')) closing ??= close(server);
      },
    });
    await waitForPort(call, '127.0.0.1', port, { state: 'closed', interval: '20ms', timeout: '20s' });
    expect(closing).toBeDefined();
    expect(server.listening).toBe(false);
  });

  it('raises when the time limit passes, naming the port and the last error', async () => {
    const { call } = callContext();
    const port = await closedPort();
    await expect(waitForPort(call, '127.0.0.1', port, { timeout: '300ms', interval: '50ms' })).rejects.toThrow(
      new RegExp(
        `^net\\.wait_for_port: 127\\.0\\.0\\.1:${port} was not open after 300ms \\(\\d+ attempts; last: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)$`,
      ),
    );
  });

  it('stops waiting when the task is cancelled', async () => {
    const controller = new AbortController();
    const port = await closedPort();
    const { call } = callContext({
      signal: controller.signal,
      onLine: () => controller.abort(new Error('run cancelled')),
    });
    await expect(waitForPort(call, '127.0.0.1', port, { timeout: '1m', interval: '30s' })).rejects.toThrow(
      `net.wait_for_port: waiting for 127.0.0.1:${port} was cancelled (run cancelled)`,
    );
  });

  it.each([
    [{ state: 'up' }, 'net.wait_for_port: state must be "open" or "closed", got string "up"'],
    [{ interval: -1 }, 'net.wait_for_port: interval must be longer than 0, got number -1'],
    [{ interval: '1 week' }, 'net.wait_for_port: interval must be a duration such as "5s"'],
    [{ retries: 3 }, 'net.wait_for_port: unknown option "retries" (known: timeout, interval, state)'],
  ])('rejects bad options %j', async (opts, message) => {
    const { call } = callContext();
    await expect(waitForPort(call, '127.0.0.1', 80, opts)).rejects.toThrow(message);
  });
});
