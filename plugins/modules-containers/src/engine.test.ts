import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import {
  composeProjectName,
  createEngineModule,
  type EngineName,
  parseListing,
  readRunSettings,
  runArguments,
  settingsHash,
} from './engine.js';
import { startTestEngine, type TestEngine } from './test-support.js';

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

// Real engines, each started by the test on storage of its own; the same cases run through both.
const ENGINES = ['docker', 'podman'] as const;
const started: Record<EngineName, TestEngine | string> = { docker: 'not started', podman: 'not started' };
beforeAll(async () => {
  const engines = await Promise.all(ENGINES.map(startTestEngine));
  ENGINES.forEach((name, i) => {
    started[name] = engines[i];
    if (typeof engines[i] === 'string') console.warn(`${name} tests skipped: ${engines[i]}`);
  });
}, 90_000);
afterAll(async () => {
  await Promise.all(Object.values(started).map((engine) => (typeof engine === 'string' ? undefined : engine.stop())));
}, 30_000);

/** The names a listed container goes by: a string in docker's listing, a list in podman's. */
function containerNames(row: Record<string, unknown>): unknown[] {
  return [row.names].flat();
}

/** The names a listed image goes by: repository and tag in docker's listing, `names` in podman's. */
function imageNames(row: Record<string, unknown>): unknown[] {
  return row.names ? [row.names].flat() : [`${String(row.repository)}:${String(row.tag)}`];
}

// Concurrent, engines and cases alike, to keep the file within the suite's time budget: every case
// works on containers, networks, volumes and projects of its own names.
describe.concurrent.each(ENGINES)('%s module against a real engine', (name) => {
  const engine = () => started[name] as TestEngine;
  const engineModule = () => createEngineModule(name, { env: engine().env });
  const image = () => engine().image;
  /** Skips the case, saying why, when the engine cannot run here. */
  const skipUnlessStarted = (ctx: TestContext) => {
    const reason = started[name];
    if (typeof reason === 'string') ctx.skip(reason);
  };

  it('runs a container once, leaves it on a second run, recreates it when its settings change', async (ctx) => {
    skipUnlessStarted(ctx);
    const { call } = luaCallContext();
    const settings = { name: 'rt-web', network: 'none', command: ['sleep', '300'], env: { MODE: 'a' } };
    const dry = await engineModule().run(luaCallContext({ dryRun: true }).call, image(), settings);
    expect(dry).toMatchObject({ changed: true, dry_run: true, action: 'create' });
    expect(await engineModule().inspect(call, 'rt-web')).toBeNull();

    const first = (await engineModule().run(call, image(), settings)) as Record<string, unknown>;
    expect(first).toMatchObject({ changed: true, action: 'create' });
    expect(await engineModule().run(call, image(), settings)).toMatchObject({ changed: false, action: 'none' });
    const changed = await engineModule().run(call, image(), { ...settings, env: { MODE: 'b' } });
    expect(changed).toMatchObject({ changed: true, action: 'recreate' });

    const exec = await engineModule().exec(call, 'rt-web', 'echo $MODE; echo oops >&2; exit 3');
    expect(exec).toMatchObject({ stdout: 'b\n', stderr: 'oops\n', exit_code: 3, success: false });
    const listed = (await engineModule().containers(call)) as Record<string, unknown>[];
    expect(listed.flatMap(containerNames)).toContain('rt-web');

    expect(await engineModule().stop(call, 'rt-web', { timeout: 0 })).toEqual({ changed: true });
    expect(await engineModule().stop(call, 'rt-web')).toEqual({ changed: false });
    expect(await engineModule().run(call, image(), { ...settings, env: { MODE: 'b' } })).toMatchObject({
      changed: true,
      action: 'start',
    });
    expect(await engineModule().remove(call, 'rt-web', { force: true })).toEqual({ changed: true });
    expect(await engineModule().remove(call, 'rt-web', { force: true })).toEqual({ changed: false });
  }, 60_000);

  it('reads a container log', async (ctx) => {
    skipUnlessStarted(ctx);
    const { call } = luaCallContext();
    await engineModule().run(call, image(), {
      name: 'rt-log',
      network: 'none',
      command: ['sh', '-c', 'echo one; echo two; echo err >&2; sleep 300'],
    });
    let logs: Record<string, unknown> = {};
    for (let i = 0; i < 100 && !String(logs.stderr ?? '').includes('err'); i++) {
      logs = (await engineModule().logs(call, 'rt-log')) as Record<string, unknown>;
      if (!String(logs.stderr).includes('err')) await new Promise((r) => setTimeout(r, 100));
    }
    expect(logs).toEqual({ stdout: 'one\ntwo\n', stderr: 'err\n' });
    expect(await engineModule().logs(call, 'rt-log', { tail: 0 })).toEqual({ stdout: '', stderr: '' });
    await engineModule().remove(call, 'rt-log', { force: true });
  }, 60_000);

  it('creates and removes networks and volumes once', async (ctx) => {
    skipUnlessStarted(ctx);
    const { call } = luaCallContext();
    expect(await engineModule().volume_create(luaCallContext({ dryRun: true }).call, 'rt-data')).toMatchObject({
      changed: true,
      dry_run: true,
    });
    expect(await engineModule().volume_create(call, 'rt-data', { labels: { app: 'rt' } })).toEqual({ changed: true });
    expect(await engineModule().volume_create(call, 'rt-data')).toEqual({ changed: false });
    expect(((await engineModule().volumes(call)) as Record<string, unknown>[]).map((v) => v.name)).toContain('rt-data');
    expect(await engineModule().volume_remove(call, 'rt-data')).toEqual({ changed: true });
    expect(await engineModule().volume_remove(call, 'rt-data')).toEqual({ changed: false });

    expect(await engineModule().network_create(call, 'rt-net', { internal: true })).toMatchObject({ changed: true });
    expect(await engineModule().network_create(call, 'rt-net')).toEqual({ changed: false });
    expect(await engineModule().network_remove(call, 'rt-net')).toEqual({ changed: true });
    expect(await engineModule().network_remove(call, 'rt-net')).toEqual({ changed: false });
  }, 60_000);

  it('brings a compose project up once and down once', async (ctx) => {
    skipUnlessStarted(ctx);
    const whyNoCompose = engine().whyNoCompose;
    if (whyNoCompose) ctx.skip(whyNoCompose);
    const dir = mkdtempSync(join(tmpdir(), 'rt-stack-'));
    try {
      writeFileSync(
        join(dir, 'compose.yaml'),
        `services:\n  app:\n    image: ${image()}\n    network_mode: none\n    stop_signal: SIGKILL\n    command: ["sleep", "300"]\n`,
      );
      const { call } = luaCallContext();
      const opts = { project: 'rtstack', file: 'compose.yaml' };
      expect(await engineModule().compose_up(luaCallContext({ dryRun: true }).call, dir, opts)).toMatchObject({
        changed: true,
        dry_run: true,
        containers: 0,
      });
      expect(await engineModule().compose_up(call, dir, opts)).toEqual({
        changed: true,
        project: 'rtstack',
        containers: 1,
      });
      expect(await engineModule().compose_up(call, dir, opts)).toEqual({
        changed: false,
        project: 'rtstack',
        containers: 1,
      });
      expect(await engineModule().compose_down(call, dir, opts)).toEqual({
        changed: true,
        project: 'rtstack',
        containers: 0,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('reports images, and a missing program clearly', async (ctx) => {
    skipUnlessStarted(ctx);
    const { call } = luaCallContext();
    const images = (await engineModule().images(call)) as Record<string, unknown>[];
    expect(images.flatMap(imageNames)).toContain(image());
    const missing = createEngineModule('podman', { bin: 'no-such-podman-here' });
    await expect(missing.containers(call)).rejects.toThrow(/no-such-podman-here is not installed/);
  }, 30_000);
});
