import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedServerArgs, startEmbeddedMaster, type EmbeddedMaster } from './embedded-master.js';
import { findRunner } from './runner-binary.js';

const desktopDir = resolve(import.meta.dirname, '..');
const runner = () => findRunner({ env: {}, appPath: desktopDir, execPath: process.execPath });

let dirs: string[] = [];
let masters: EmbeddedMaster[] = [];
afterEach(async () => {
  await Promise.all(masters.map((m) => m.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
  masters = [];
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'runner-desktop-'));
  dirs.push(dir);
  return dir;
}

describe('the embedded master', () => {
  it('listens on loopback only, every port free', () => {
    const args = embeddedServerArgs('/d');
    expect(args.join(' ')).toBe(
      '--data-dir /d server --http-port 0 --bind-address 127.0.0.1 --port 0 --grpc-bind-address 127.0.0.1',
    );
  });

  it('starts a real runner server on a free port, answers with its credential, and stops on SIGTERM', async () => {
    const dataDir = join(await tempDir(), 'master');
    const master = await startEmbeddedMaster({ runner: runner(), dataDir, env: process.env });
    masters.push(master);

    expect(master.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(master.base).not.toMatch(/:8080$/);
    const info = JSON.parse(await readFile(join(dataDir, 'master.json'), 'utf8'));
    expect(info.pid).toBe(master.pid);
    expect(info.http).toBe(master.base.replace('http://', ''));

    // The credential is the data directory's local token, fresh from this start: the API refuses
    // a call without it and answers one with it.
    const token = (await readFile(join(dataDir, 'auth', 'local.token'), 'utf8')).trim();
    const authorization = await master.authorization();
    expect(authorization).toBe(`Bearer ${token}`);
    expect((await fetch(`${master.base}/api/v1/agents`)).status).toBe(401);
    const agents = await fetch(`${master.base}/api/v1/agents`, { headers: { authorization: authorization! } });
    expect(agents.status).toBe(200);
    const health = await fetch(`${master.base}/api/v1/health`);
    expect(await health.json()).toMatchObject({ status: 'ok' });

    await master.stop();
    expect(await master.exited).toMatchObject({ signal: null, code: 0 });
    await expect(fetch(`${master.base}/api/v1/health`)).rejects.toThrow();
    // A clean stop removes master.json: nothing claims the data directory any more.
    await expect(readFile(join(dataDir, 'master.json'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('fails with what the process printed when it dies before serving', async () => {
    const dir = await tempDir();
    const fake = join(dir, 'runner');
    await writeFile(fake, '#!/bin/sh\necho "cannot open the store: disk full" >&2\nexit 3\n');
    await chmod(fake, 0o755);
    const failed = startEmbeddedMaster({
      runner: { command: fake, args: [], env: {}, source: 'test' },
      dataDir: join(dir, 'master'),
      env: process.env,
    });
    await expect(failed).rejects.toThrow(
      /exited with code 3 before it served its API:\ncannot open the store: disk full/,
    );
  });

  it('gives up after the start timeout, and kills a process that ignores SIGTERM after the grace period', async () => {
    const dir = await tempDir();
    const fake = join(dir, 'runner');
    // An ignored signal stays ignored across exec: sleep will not die of SIGTERM.
    await writeFile(fake, "#!/bin/sh\necho starting\ntrap '' TERM\nexec sleep 30\n");
    await chmod(fake, 0o755);
    const started = Date.now();
    await expect(
      startEmbeddedMaster({
        runner: { command: fake, args: [], env: {}, source: 'test' },
        dataDir: join(dir, 'master'),
        env: process.env,
        startTimeoutMs: 500,
        stopTimeoutMs: 1000,
      }),
    ).rejects.toThrow(/did not write .*master.json within 500 ms; it printed:\nstarting/);
    // 500 ms of waiting, 1000 ms of grace after SIGTERM, then SIGKILL.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
