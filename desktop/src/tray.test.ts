import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeElectron } from './fake-electron.js';
import { TrayStatus, checkHealth, trayToolTip } from './tray.js';

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  servers = [];
});

/** A real HTTP server on a free loopback port answering /api/v1/health with `answer`. */
async function healthServer(answer: (auth: string | undefined) => { status: number; body: unknown }): Promise<string> {
  const server = createServer((request, response) => {
    const { status, body } = answer(request.headers.authorization);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('checkHealth', () => {
  it('reports a master that answers ok, with version and uptime, sending the credential', async () => {
    const base = await healthServer((auth) =>
      auth === 'Bearer t'
        ? { status: 200, body: { status: 'ok', version: '0.1.0', uptime_seconds: 125 } }
        : { status: 401, body: { error: { code: 'unauthorized' } } },
    );
    expect(await checkHealth(base, 'Bearer t')).toEqual({ state: 'up', detail: 'runner 0.1.0, up 2 min' });
    expect(await checkHealth(base, undefined)).toEqual({ state: 'down', detail: 'health check answered HTTP 401' });
  });

  it('reports a master that is gone or not healthy', async () => {
    const base = await healthServer(() => ({ status: 200, body: { status: 'degraded' } }));
    expect(await checkHealth(base, undefined)).toEqual({ state: 'down', detail: 'health status is "degraded"' });
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect(await checkHealth(base, undefined)).toEqual({ state: 'down', detail: 'unreachable (ECONNREFUSED)' });
  });
});

describe('TrayStatus', () => {
  it('shows the followed master in tooltip and menu, and drops answers about a master no longer followed', async () => {
    const electron = fakeElectron('/nowhere');
    const tray = electron.createTray('/icon.png');
    const up = await healthServer(() => ({ status: 200, body: { status: 'ok', version: '0.1.0', uptime_seconds: 5 } }));
    const status = new TrayStatus(tray, (s) => [{ label: `${s.state}: ${s.detail}`, enabled: false }], 60_000);
    expect(tray.toolTip).toBe('runner: master is starting (starting)');

    await status.follow({ name: 'Embedded master', base: up, authorization: async () => undefined });
    expect(tray.toolTip).toBe('runner: Embedded master is up (runner 0.1.0, up 5 s)');
    expect(tray.menu).toEqual([{ label: 'up: runner 0.1.0, up 5 s', enabled: false }]);

    const closed = await healthServer(() => ({ status: 200, body: {} }));
    await new Promise((resolve) => servers.pop()!.close(resolve));
    await status.follow({ name: 'lab', base: closed, authorization: async () => undefined });
    expect(tray.toolTip).toMatch(/^runner: lab is down \(unreachable \(ECONNREFUSED\)\)$/);
    expect(trayToolTip('x', { state: 'up', detail: 'd' })).toBe('runner: x is up (d)');

    // A slow answer from the master followed before must not overwrite the one followed now.
    const slowServer = createServer((_request, response) => {
      setTimeout(() => response.end(JSON.stringify({ status: 'ok', version: 'slow' })), 300);
    });
    servers.push(slowServer);
    await new Promise<void>((resolve) => slowServer.listen(0, '127.0.0.1', resolve));
    const slow = `http://127.0.0.1:${(slowServer.address() as AddressInfo).port}`;
    const first = status.follow({ name: 'slow', base: slow, authorization: async () => undefined });
    await status.follow({ name: 'Embedded master', base: up, authorization: async () => undefined });
    await first;
    expect(tray.toolTip).toBe('runner: Embedded master is up (runner 0.1.0, up 5 s)');

    status.stop();
    expect(tray.destroyed).toBe(true);
  });
});
