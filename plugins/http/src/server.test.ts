import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpRouterRef } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { plugin } from './plugin.js';
import { startHttp, type RunningHttp, testRoute } from './test-support.js';

const running: RunningHttp[] = [];
const blockers: Server[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.kernel.stop();
  for (const b of blockers.splice(0)) await new Promise((resolve) => b.close(resolve));
});

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A GET on a fresh connection; resolves with status and body, rejects with the socket error. */
function get(port: number, path: string): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('listening', () => {
  it('has no address before ready and the bound one after', async () => {
    const kernel = await createTestKernel({
      plugins: [plugin],
      profile: 'master',
      config: { 'http.port': 0, 'http.bind_address': '127.0.0.1' },
    });
    const router = kernel.get(HttpRouterRef);
    expect(router.address()).toBeNull();
    await kernel.ready();
    const address = router.address();
    expect(address?.host).toBe('127.0.0.1');
    expect(address?.port).toBeGreaterThan(0);
    await kernel.stop();
    expect(router.address()).toBeNull();
  });

  it('fails with one line naming address and port when the port is taken', async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const kernel = await createTestKernel({
      plugins: [plugin],
      profile: 'master',
      config: { 'http.port': port, 'http.bind_address': '127.0.0.1' },
    });
    const failure = await kernel.ready().then(
      () => undefined,
      (error: Error) => error,
    );
    await kernel.stop();
    expect(failure?.message).toBe(
      `cannot listen on 127.0.0.1:${port}: address already in use (another runner master or program holds it; choose another with http.port or --http-port)`,
    );
    expect(failure?.message).not.toContain('\n');
    expect((failure as { code?: string }).code).toBe('listen_failed');
  });

  it('refuses bad config at setup, naming the key', async () => {
    await expect(
      createTestKernel({ plugins: [plugin], profile: 'master', config: { 'http.port': 70000 } }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      details: { field: 'http.port' },
    });
    await expect(
      createTestKernel({ plugins: [plugin], profile: 'master', config: { 'http.body_limit': 0 } }),
    ).rejects.toMatchObject({
      details: { field: 'http.body_limit' },
    });
    await expect(
      createTestKernel({ plugins: [plugin], profile: 'master', config: { 'http.cors_origins': 5 } }),
    ).rejects.toMatchObject({
      details: { field: 'http.cors_origins' },
    });
  });
});

describe('master.json', () => {
  it('is written when listening, with a connectable host for a wildcard bind, and removed at stop', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'runner-http-')), 'not-yet-created');
    const r = await startHttp({ 'http.bind_address': '0.0.0.0', 'http.insecure': true }, undefined, dataDir);
    running.push(r);
    const file = join(dataDir, 'master.json');
    const master = JSON.parse(readFileSync(file, 'utf8'));
    expect(master).toEqual({ pid: process.pid, http: `127.0.0.1:${r.port}`, started_at: expect.any(Number) });
    expect(Math.abs(master.started_at - Date.now() / 1000)).toBeLessThan(60);
    // The address in the file is what a CLI dials.
    const health = await get(r.port, '/api/v1/health');
    expect(health.status).toBe(200);
    expect(readFileSync(file, 'utf8')).not.toBe('');

    await r.kernel.stop();
    expect(existsSync(file)).toBe(false);
  });
});

describe('graceful shutdown', () => {
  it('finishes a request in flight, refuses new connections, then stops', async () => {
    const entered = deferred();
    const release = deferred();
    const r = await startHttp({}, (router) => {
      router.add(
        testRoute('GET', '/slow', async () => {
          entered.resolve();
          await release.promise;
          return { done: true };
        }),
      );
    });
    running.push(r);

    const inFlight = get(r.port, '/api/v1/slow');
    await entered.promise;
    let stopped = false;
    const stopping = r.kernel.stop().then(() => (stopped = true));

    // The beforeStop tap closes the listener synchronously, before anything is awaited.
    await expect(get(r.port, '/api/v1/health')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(stopped).toBe(false);

    release.resolve();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ done: true });
    // Its connection is not kept alive for more requests.
    expect(answer.connection).toBe('close');
    await stopping;
    expect(stopped).toBe(true);
  });

  it('destroys what is still open after http.shutdown_timeout', async () => {
    const entered = deferred();
    const r = await startHttp({ 'http.shutdown_timeout': 0.2 }, (router) => {
      router.add(
        testRoute('GET', '/never', () => {
          entered.resolve();
          return new Promise(() => {});
        }),
      );
    });
    running.push(r);
    const inFlight = get(r.port, '/api/v1/never');
    await entered.promise;
    const started = Date.now();
    await r.kernel.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(inFlight).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(
      r.kernel.logs.some(
        (l) =>
          l.level === 'warn' && l.message.includes('1 request(s) and 0 WebSocket client(s) still open after 0.2 s'),
      ),
    ).toBe(true);
  });
});

/** Writes raw bytes and resolves with everything the server sent until it closed. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (received += c));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('requests Node cannot parse', () => {
  it('get the JSON error body and a request id', async () => {
    const r = await startHttp();
    running.push(r);
    const answer = await rawExchange(r.port, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(head).toMatch(/\r\nx-request-id: [0-9a-f-]{36}(\r\n|$)/);
    expect(JSON.parse(body)).toEqual({
      error: { code: 'invalid_input', message: 'malformed HTTP request (HPE_INVALID_HEADER_TOKEN)' },
    });

    const huge = await rawExchange(
      r.port,
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(JSON.parse(huge.split('\r\n\r\n')[1]).error.code).toBe('headers_too_large');
  });
});
