import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Permissions, principalFor, type BusEvent } from '@runner/plugin-sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startHttp, type RunningHttp } from './test-support.js';

const running: RunningHttp[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const r of running.splice(0)) await r.kernel.stop();
});

async function start(config: Record<string, unknown> = {}): Promise<RunningHttp> {
  const r = await startHttp(config);
  running.push(r);
  return r;
}

/** Opens a client and resolves once the handshake is done, with the 101 response. */
function connect(
  r: RunningHttp,
  options: ConstructorParameters<typeof WebSocket>[2] = {},
): Promise<{ ws: WebSocket; upgrade: IncomingMessage }> {
  const ws = new WebSocket(`ws://127.0.0.1:${r.port}/api/v1/ws`, options);
  sockets.push(ws);
  return new Promise((resolve, reject) => {
    let upgrade: IncomingMessage | undefined;
    ws.once('upgrade', (res) => (upgrade = res));
    ws.once('open', () => resolve({ ws, upgrade: upgrade as IncomingMessage }));
    ws.once('error', reject);
  });
}

/** Resolves with the status a refused handshake got. */
function refusal(
  url: string,
  options: ConstructorParameters<typeof WebSocket>[2] = {},
): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(url, options);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the handshake succeeded')));
    // ws reports the refused handshake as an error too, after 'unexpected-response'.
    ws.on('error', () => {});
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
  });
}

function nextMessage(ws: WebSocket): Promise<any> {
  return new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))));
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
}

describe('WebSocket hub', () => {
  it('sends every bus event as {type, timestamp in Unix seconds, data}', async () => {
    const r = await start();
    const { ws, upgrade } = await connect(r);
    expect(upgrade.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.hub.clientCount()).toBe(1);

    const received = nextMessage(ws);
    const data = { agent_name: 'web-1', address: '10.0.0.5:50053', status: 'online' };
    r.kernel.events.emit('agent.connected', data);
    const message = await received;
    const emitted = r.kernel.emitted.at(-1) as BusEvent;
    expect(message).toEqual({
      type: 'agent.connected',
      timestamp: Math.floor(emitted.timestamp / 1000),
      timestamp_ms: emitted.timestamp,
      id: emitted.id,
      data,
    });
    expect(Number.isInteger(message.timestamp)).toBe(true);
  });

  it('broadcasts typed messages from plugins to every client', async () => {
    const r = await start();
    const a = await connect(r);
    const b = await connect(r);
    const toA = nextMessage(a.ws);
    const toB = nextMessage(b.ws);
    r.hub.broadcast('agent_update', { name: 'web-1', status: 'online', cpu_usage: 12.5, memory_usage: 40 });
    for (const message of [await toA, await toB]) {
      expect(message).toEqual({
        type: 'agent_update',
        timestamp: expect.any(Number),
        timestamp_ms: expect.any(Number),
        data: { name: 'web-1', status: 'online', cpu_usage: 12.5, memory_usage: 40 },
      });
      expect(Math.abs(message.timestamp - Date.now() / 1000)).toBeLessThan(60);
    }
  });

  it('encodes each event once for all clients, and not at all while none is connected', async () => {
    const r = await start();
    let encoded = 0;
    // JSON.stringify calls toJSON once per encoding of the event.
    const emit = (n: number) =>
      r.kernel.events.emit('agent.connected', {
        agent_name: `a${n}`,
        address: { toJSON: () => (encoded++, 'h:1') } as unknown as string,
        status: 'online',
      });
    emit(0);
    expect(encoded).toBe(0);

    const clients = await Promise.all([connect(r), connect(r), connect(r)]);
    const received = clients.map(({ ws }) => nextMessage(ws));
    emit(1);
    expect(encoded).toBe(1);
    for (const message of await Promise.all(received))
      expect(message.data).toEqual({ agent_name: 'a1', address: 'h:1', status: 'online' });

    for (const { ws } of clients) ws.close(1000, 'done');
    await Promise.all(clients.map(({ ws }) => closed(ws)));
    await vi.waitFor(() => expect(r.hub.clientCount()).toBe(0));
    emit(2);
    expect(encoded).toBe(1);
  });

  it('sends a burst of events in one write per client, in order', async () => {
    // However long the burst takes on a busy machine: the age bound is the next test's.
    const r = await start({ 'http.ws_max_batch_age': 60_000 });
    const clients = await Promise.all([connect(r), connect(r)]);
    const names: string[][] = [[], []];
    const all = clients.map(
      ({ ws }, i) =>
        new Promise<void>((resolve) =>
          ws.on('message', (data) => {
            names[i].push(JSON.parse(String(data)).data.agent_name);
            if (names[i].length === 50) resolve();
          }),
        ),
    );
    // Counts writes on the server's side of the connections.
    const write = Socket.prototype.write;
    let writes = 0;
    Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
      if (this.localPort === r.port) writes++;
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof write;
    try {
      for (let i = 0; i < 50; i++)
        r.kernel.events.emit('agent.connected', { agent_name: `a${i}`, address: 'h:1', status: 'online' });
      await Promise.all(all);
    } finally {
      Socket.prototype.write = write;
    }
    const expected = Array.from({ length: 50 }, (_, i) => `a${i}`);
    expect(names).toEqual([expected, expected]);
    expect(writes).toBe(2);
  });

  it('writes a batch older than http.ws_max_batch_age with the next event, before the turn ends', async () => {
    const r = await start({ 'http.ws_max_batch_age': 2 });
    const { ws } = await connect(r);
    const names: string[] = [];
    const received = new Promise<void>((resolve) =>
      ws.on('message', (data) => {
        names.push(JSON.parse(String(data)).data.agent_name);
        if (names.length === 2) resolve();
      }),
    );
    let emitted = 0;
    const emit = () => {
      emitted++;
      r.kernel.events.emit('agent.connected', { agent_name: `a${emitted}`, address: 'h:1', status: 'online' });
    };
    /** During which emit each server-side write happened. */
    const writesDuring: number[] = [];
    const write = Socket.prototype.write;
    Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
      if (this.localPort === r.port) writesDuring.push(emitted);
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof write;
    try {
      // One synchronous stretch, as a run's promise continuations are: the event loop does not turn.
      emit();
      for (const until = performance.now() + 5; performance.now() < until;);
      emit(); // the batch is 5 ms old: it goes out now, with this event, not at the end of the turn
      expect(writesDuring).toEqual([2]);
      await received;
    } finally {
      Socket.prototype.write = write;
    }
    expect(names).toEqual(['a1', 'a2']);
  });

  it('closes clients with 1001 when the server stops', async () => {
    const r = await start();
    const { ws } = await connect(r);
    const closing = closed(ws);
    await r.kernel.stop();
    expect(await closing).toEqual({ code: 1001, reason: 'server stopping' });
  });

  it('closes a client that falls behind with 1013 and stops sending to it', async () => {
    const r = await start({ 'http.ws_max_buffered_bytes': 64 * 1024 });
    const { ws } = await connect(r);
    const fast = await connect(r);
    // The slow client reads nothing; the server's backlog for it grows once the socket buffers fill.
    const raw = (ws as unknown as { _socket: import('node:net').Socket })._socket;
    raw.pause();
    let fastReceived = 0;
    let lastArrived!: () => void;
    const last = new Promise<void>((resolve) => (lastArrived = resolve));
    fast.ws.on('message', (data) => {
      fastReceived++;
      if (JSON.parse(String(data)).data.after === true) lastArrived();
    });

    const payload = { big: 'x'.repeat(16 * 1024) };
    let sent = 0;
    while (r.hub.clientCount() === 2 && sent < 5_000) {
      r.hub.broadcast('system_alert', payload);
      sent++;
      // Lets the fast client read; the paused one cannot.
      await new Promise(setImmediate);
    }
    expect(r.hub.clientCount()).toBe(1);
    expect(r.kernel.logs.some((l) => l.level === 'warn' && l.message === 'websocket client too slow, closing it')).toBe(
      true,
    );

    const closing = closed(ws);
    raw.resume();
    expect(await closing).toEqual({ code: 1013, reason: 'client too slow; reconnect' });
    // The other client got everything, the last message included.
    r.hub.broadcast('system_alert', { after: true });
    await last;
    expect(fastReceived).toBe(sent + 1);
  });

  it('pings clients and terminates one that stops answering', async () => {
    const r = await start({ 'http.ws_ping_interval': 0.05 });
    const { ws } = await connect(r);
    await new Promise((resolve) => ws.once('ping', resolve));

    const silent = await connect(r, { autoPong: false });
    const closing = closed(silent.ws);
    // 1006: the socket was destroyed without a close frame.
    expect((await closing).code).toBe(1006);
    expect(ws.readyState).toBe(WebSocket.OPEN);
  });

  it('refuses an upgrade on another path with 404 and from an origin not listed with 403', async () => {
    const r = await start({ 'http.cors_origins': ['https://ui.example'] });
    const wrongPath = await refusal(`ws://127.0.0.1:${r.port}/api/v1/socket`);
    expect(wrongPath).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'no WebSocket endpoint at /api/v1/socket; use /api/v1/ws' } },
    });
    const badOrigin = await refusal(`ws://127.0.0.1:${r.port}/api/v1/ws`, { origin: 'https://evil.example' });
    expect(badOrigin).toEqual({
      status: 403,
      body: {
        error: { code: 'forbidden', message: 'origin https://evil.example is not allowed (config http.cors_origins)' },
      },
    });
    const { ws } = await connect(r, { origin: 'https://ui.example' });
    expect(ws.readyState).toBe(WebSocket.OPEN);
  });

  it('answers a plain GET of the endpoint with 426', async () => {
    const r = await start();
    const response = await fetch(`${r.base}/api/v1/ws`);
    expect(response.status).toBe(426);
    expect(response.headers.get('upgrade')).toBe('websocket');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('upgrade_required');
  });
});

describe('messages between masters (the cluster relays them)', () => {
  it("hands over its own messages, even with no client, and sends another master's to its clients only once", async () => {
    const r = await start();
    const relayed: { text: string; permission: string }[] = [];
    const off = r.hub.onMessage((text, permission) => relayed.push({ text, permission }));
    const data = { agent_name: 'web-1', address: '10.0.0.1:5000', status: 'online' };
    r.kernel.events.emit('agent.connected', data);
    r.hub.broadcast('agent_update', { name: 'web-1', status: 'online', cpu_usage: 1, memory_usage: 2 });
    expect(relayed.map((m) => JSON.parse(m.text).type)).toEqual(['agent.connected', 'agent_update']);

    const { ws } = await connect(r);
    const received = nextMessage(ws);
    const other = JSON.stringify({ type: 'workflow.started', timestamp: 1, data: { run_id: 'r-elsewhere' } });
    r.hub.deliver(other, Permissions.workflowView);
    expect(await received).toEqual(JSON.parse(other));
    // Delivered messages are not handed over again (they would go round between masters).
    expect(relayed).toHaveLength(2);
    off();
    r.hub.broadcast('agent_update', { name: 'web-1', status: 'offline', cpu_usage: 0, memory_usage: 0 });
    expect(relayed).toHaveLength(2);
  });
});

describe('what a client may see', () => {
  it('carries only the events and messages its principal holds the permission for', async () => {
    const r = await startHttp({}, (router) =>
      router.guard({
        name: 'test.viewer',
        order: 100,
        check(context) {
          context.principal = principalFor({ id: 'v', name: 'vic', role: 'viewer', method: 'basic' });
        },
      }),
    );
    running.push(r);
    const { ws } = await connect(r);
    const received: string[] = [];
    ws.on('message', (data) => received.push((JSON.parse(String(data)) as { type: string }).type));
    await r.kernel.events.emit('audit.recorded' as never, {} as never);
    await r.kernel.events.emit('workflow.started' as never, {} as never);
    r.hub.broadcast('system_alert', { text: 'for admins' }, { permission: 'system:admin' });
    r.hub.broadcast('agent_update', { name: 'a', status: 'online', cpu_usage: 0, memory_usage: 0 });
    await vi.waitFor(() => expect(received).toContain('agent_update'));
    expect(received).toEqual(['workflow.started', 'agent_update']);
  });
});
