import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { hostAllowed, isLoopback, originAllowed } from './network-checks.js';
import { plugin } from './plugin.js';
import { startHttp, type RunningHttp } from './test-support.js';

const running: RunningHttp[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.kernel.stop();
});

/** A raw request, so that the Host header is exactly what the test says. */
function get(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: headers['access-control-request-method'] ? 'OPTIONS' : 'GET', headers },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function upgrade(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => undefined);
  });
}

describe('Host, Origin and bind checks', () => {
  it('tell loopback addresses, rebindable host names and foreign origins apart', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', 'localhost', '[::1]'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', 'example.com'].some(isLoopback)).toBe(false);
    expect(hostAllowed('127.0.0.1:8080', [])).toBe(true);
    expect(hostAllowed('[::1]:8080', [])).toBe(true);
    expect(hostAllowed('localhost:8080', [])).toBe(true);
    expect(hostAllowed('evil.example:8080', [])).toBe(false);
    expect(hostAllowed('Runner.Corp:8080', ['runner.corp'])).toBe(true);
    expect(originAllowed('http://127.0.0.1:8080', '127.0.0.1:8080', [])).toBe(true);
    expect(originAllowed('http://127.0.0.1:9999', '127.0.0.1:8080', [])).toBe(false);
    expect(originAllowed('https://evil.example', '127.0.0.1:8080', [])).toBe(false);
    expect(originAllowed('https://ui.example', '127.0.0.1:8080', ['https://ui.example'])).toBe(true);
    expect(originAllowed('not a url', '127.0.0.1:8080', [])).toBe(false);
  });

  it('refuse a request whose Host is a foreign name (DNS rebinding), before any route runs', async () => {
    const r = await startHttp({ 'http.allowed_hosts': ['runner.corp'] });
    running.push(r);
    expect((await get(r.port, '/api/v1/health', { host: `127.0.0.1:${r.port}` })).status).toBe(200);
    expect((await get(r.port, '/api/v1/health', { host: `runner.corp:${r.port}` })).status).toBe(200);
    const rebound = await get(r.port, '/api/v1/health', { host: `evil.example:${r.port}` });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error.message).toContain('Host "evil.example');
    const socket = await upgrade(`ws://127.0.0.1:${r.port}/api/v1/ws`, { host: `evil.example:${r.port}` });
    expect(socket).toBe(403);
  });

  it('allow the master’s own origin and refuse a foreign one, for preflights and WebSocket upgrades', async () => {
    const r = await startHttp();
    running.push(r);
    const own = `http://127.0.0.1:${r.port}`;
    const preflight = (origin: string) =>
      get(r.port, '/api/v1/health', { origin, 'access-control-request-method': 'GET' });
    expect((await preflight(own)).status).toBe(204);
    expect((await preflight('https://evil.example')).status).toBe(403);
    expect(await upgrade(`ws://127.0.0.1:${r.port}/api/v1/ws`, { origin: own })).toBe(101);
    expect(await upgrade(`ws://127.0.0.1:${r.port}/api/v1/ws`, { origin: 'https://evil.example' })).toBe(403);
  });

  it('refuse to bind beyond loopback without authentication unless told --insecure', async () => {
    await expect(
      createTestKernel({
        plugins: [plugin],
        profile: 'master',
        config: { 'http.port': 0, 'http.bind_address': '0.0.0.0' },
      }),
    ).rejects.toThrow(/refusing to serve the REST API on 0\.0\.0\.0 with authentication off/);
    const kernel = await createTestKernel({
      plugins: [plugin],
      profile: 'master',
      config: { 'http.port': 0, 'http.bind_address': '0.0.0.0', 'http.insecure': true },
    });
    expect(kernel.logs.some((l) => l.level === 'warn' && l.message.startsWith('INSECURE'))).toBe(true);
    await kernel.stop();
  });

  it('refuse plain HTTP beyond loopback with authentication on unless told --insecure, warning at each start', async () => {
    const exposed = { 'http.port': 0, 'http.bind_address': '0.0.0.0', 'auth.enabled': true };
    await expect(createTestKernel({ plugins: [plugin], profile: 'master', config: exposed })).rejects.toThrow(
      /refusing to serve the REST API on 0\.0\.0\.0 over plain HTTP.*--tls-cert.*--insecure/,
    );
    for (let start = 0; start < 2; start++) {
      const kernel = await createTestKernel({
        plugins: [plugin],
        profile: 'master',
        config: { ...exposed, 'http.insecure': true },
      });
      expect(kernel.logs.some((l) => l.level === 'warn' && /^INSECURE.*plain HTTP/.test(l.message))).toBe(true);
      await kernel.stop();
    }
  });
});

describe('security headers', () => {
  it('forbid framing, referrers and content on API answers, and caching of authentication answers', async () => {
    const r = await startHttp();
    running.push(r);
    const health = await get(r.port, '/api/v1/health', {});
    expect(health.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(health.headers['x-frame-options']).toBe('DENY');
    expect(health.headers['referrer-policy']).toBe('no-referrer');
    expect(health.headers['strict-transport-security']).toBeUndefined();
    const missing = await get(r.port, '/not-the-api', {});
    expect(missing.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(missing.headers['x-frame-options']).toBe('DENY');
    const auth = await get(r.port, '/api/v1/auth/login', {});
    expect(auth.headers['cache-control']).toBe('no-store');
  });
});
