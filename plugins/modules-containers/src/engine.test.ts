import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  composeProjectName,
  createEngineModule,
  parseListing,
  readRunSettings,
  runArguments,
  settingsHash,
} from './engine.js';
import { startDockerDaemon, type TestDaemon } from './test-support.js';

describe('container settings', () => {
  it('hashes the same settings the same whatever the order of env and labels', () => {
    const a = readRunSettings('docker.run', 'nginx', { name: 'web', env: { A: '1', B: '2' }, labels: { x: 'y' } });
    const b = readRunSettings('docker.run', 'nginx', { labels: { x: 'y' }, env: { B: '2', A: '1' }, name: 'web' });
    expect(settingsHash(a)).toBe(settingsHash(b));
    const c = readRunSettings('docker.run', 'nginx', { name: 'web', env: { A: '1', B: '3' }, labels: { x: 'y' } });
    expect(settingsHash(c)).not.toBe(settingsHash(a));
  });

  it('builds the run command from the settings, the command after the image', () => {
    const settings = readRunSettings('docker.run', 'nginx:1', {
      name: 'web',
      ports: ['8080:80'],
      volumes: '/srv:/usr/share/nginx/html:ro',
      env: { MODE: 'prod' },
      restart: 'unless-stopped',
      command: ['nginx', '-g', 'daemon off;'],
    });
    const args = runArguments(settings);
    expect(args.slice(0, 4)).toEqual(['run', '-d', '--name', 'web']);
    expect(args).toContain('io.runner.config=' + settingsHash(settings));
    expect(args.join(' ')).toContain(
      '-e MODE=prod -p 8080:80 -v /srv:/usr/share/nginx/html:ro --restart unless-stopped',
    );
    expect(args.slice(-4)).toEqual(['nginx:1', 'nginx', '-g', 'daemon off;']);
  });

  it('requires a name and refuses unknown options', () => {
    expect(() => readRunSettings('docker.run', 'nginx', {})).toThrow(/option name is required/);
    expect(() => readRunSettings('docker.run', 'nginx', { name: 'a', port: '80' })).toThrow(/unknown option "port"/);
  });

  it('reads docker JSON lines and podman JSON arrays alike', () => {
    expect(
      parseListing('{"ID":"abc","Names":"web","State":"running"}\n{"ID":"def","Names":"db","State":"exited"}\n'),
    ).toEqual([
      { id: 'abc', names: 'web', state: 'running' },
      { id: 'def', names: 'db', state: 'exited' },
    ]);
    expect(parseListing('[{"Id":"abc","Names":["web"],"State":"running","CreatedAt":"x"}]')).toEqual([
      { id: 'abc', names: ['web'], state: 'running', created_at: 'x' },
    ]);
    expect(parseListing('\n')).toEqual([]);
    expect(composeProjectName('/srv/My App.v2')).toBe('myappv2');
  });
});

// A real Docker daemon (Debian docker.io), started by the test on a socket of its own.
let daemon: TestDaemon | string = 'not started';
beforeAll(async () => {
  daemon = await startDockerDaemon();
  if (typeof daemon === 'string') console.warn(`docker tests skipped: ${daemon}`);
}, 90_000);
afterAll(async () => {
  if (typeof daemon !== 'string') await daemon.stop();
}, 30_000);

describe('docker module against a real daemon', () => {
  const docker = () => createEngineModule('docker', { env: (daemon as TestDaemon).env });
  const image = () => (daemon as TestDaemon).image;

  it('runs a container once, leaves it on a second run, recreates it when its settings change', async (ctx) => {
    if (typeof daemon === 'string') return ctx.skip();
    const { call } = luaCallContext();
    const settings = { name: 'rt-web', network: 'none', command: ['sleep', '300'], env: { MODE: 'a' } };
    const dry = await docker().run(luaCallContext({ dryRun: true }).call, image(), settings);
    expect(dry).toMatchObject({ changed: true, dry_run: true, action: 'create' });
    expect(await docker().inspect(call, 'rt-web')).toBeNull();

    const first = (await docker().run(call, image(), settings)) as Record<string, unknown>;
    expect(first).toMatchObject({ changed: true, action: 'create' });
    expect(await docker().run(call, image(), settings)).toMatchObject({ changed: false, action: 'none' });
    const changed = await docker().run(call, image(), { ...settings, env: { MODE: 'b' } });
    expect(changed).toMatchObject({ changed: true, action: 'recreate' });

    const exec = await docker().exec(call, 'rt-web', 'echo $MODE; echo oops >&2; exit 3');
    expect(exec).toMatchObject({ stdout: 'b\n', stderr: 'oops\n', exit_code: 3, success: false });
    const listed = (await docker().containers(call)) as Record<string, unknown>[];
    expect(listed.map((c) => c.names)).toContain('rt-web');

    expect(await docker().stop(call, 'rt-web', { timeout: 0 })).toEqual({ changed: true });
    expect(await docker().stop(call, 'rt-web')).toEqual({ changed: false });
    expect(await docker().run(call, image(), { ...settings, env: { MODE: 'b' } })).toMatchObject({
      changed: true,
      action: 'start',
    });
    expect(await docker().remove(call, 'rt-web', { force: true })).toEqual({ changed: true });
    expect(await docker().remove(call, 'rt-web', { force: true })).toEqual({ changed: false });
  }, 60_000);

  it('reads a container log', async (ctx) => {
    if (typeof daemon === 'string') return ctx.skip();
    const { call } = luaCallContext();
    await docker().run(call, image(), {
      name: 'rt-log',
      network: 'none',
      command: ['sh', '-c', 'echo one; echo two; echo err >&2; sleep 300'],
    });
    let logs: Record<string, unknown> = {};
    for (let i = 0; i < 100 && !String(logs.stderr ?? '').includes('err'); i++) {
      logs = (await docker().logs(call, 'rt-log')) as Record<string, unknown>;
      if (!String(logs.stderr).includes('err')) await new Promise((r) => setTimeout(r, 100));
    }
    expect(logs).toEqual({ stdout: 'one\ntwo\n', stderr: 'err\n' });
    expect(await docker().logs(call, 'rt-log', { tail: 0 })).toEqual({ stdout: '', stderr: '' });
    await docker().remove(call, 'rt-log', { force: true });
  }, 60_000);

  it('creates and removes networks and volumes once', async (ctx) => {
    if (typeof daemon === 'string') return ctx.skip();
    const { call } = luaCallContext();
    expect(await docker().volume_create(luaCallContext({ dryRun: true }).call, 'rt-data')).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(await docker().volume_create(call, 'rt-data', { labels: { app: 'rt' } })).toEqual({ changed: true });
    expect(await docker().volume_create(call, 'rt-data')).toEqual({ changed: false });
    expect(((await docker().volumes(call)) as Record<string, unknown>[]).map((v) => v.name)).toContain('rt-data');
    expect(await docker().volume_remove(call, 'rt-data')).toEqual({ changed: true });
    expect(await docker().volume_remove(call, 'rt-data')).toEqual({ changed: false });

    expect(await docker().network_create(call, 'rt-net', { internal: true })).toMatchObject({ changed: true });
    expect(await docker().network_create(call, 'rt-net')).toEqual({ changed: false });
    expect(await docker().network_remove(call, 'rt-net')).toEqual({ changed: true });
    expect(await docker().network_remove(call, 'rt-net')).toEqual({ changed: false });
  }, 60_000);

  it('brings a compose project up once and down once', async (ctx) => {
    if (typeof daemon === 'string') return ctx.skip();
    const dir = mkdtempSync(join(tmpdir(), 'rt-stack-'));
    try {
      writeFileSync(
        join(dir, 'compose.yaml'),
        `services:\n  app:\n    image: ${image()}\n    network_mode: none\n    stop_signal: SIGKILL\n    command: ["sleep", "300"]\n`,
      );
      const { call } = luaCallContext();
      const opts = { project: 'rtstack', file: 'compose.yaml' };
      expect(await docker().compose_up(luaCallContext({ dryRun: true }).call, dir, opts)).toMatchObject({
        changed: true,
        dry_run: true,
        containers: 0,
      });
      expect(await docker().compose_up(call, dir, opts)).toEqual({ changed: true, project: 'rtstack', containers: 1 });
      expect(await docker().compose_up(call, dir, opts)).toEqual({ changed: false, project: 'rtstack', containers: 1 });
      expect(await docker().compose_down(call, dir, opts)).toEqual({
        changed: true,
        project: 'rtstack',
        containers: 0,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('reports images, and a missing program clearly', async (ctx) => {
    if (typeof daemon === 'string') return ctx.skip();
    const { call } = luaCallContext();
    const images = (await docker().images(call)) as Record<string, unknown>[];
    expect(images.map((i) => `${String(i.repository)}:${String(i.tag)}`)).toContain(image());
    const missing = createEngineModule('podman', { bin: 'no-such-podman-here' });
    await expect(missing.containers(call)).rejects.toThrow(/no-such-podman-here is not installed/);
  }, 30_000);
});
