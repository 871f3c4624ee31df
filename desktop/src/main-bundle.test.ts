// Runs the built dist/main.cjs, the file Electron would load, under Node with a stand-in for the
// `electron` module (electron-double.cjs; Electron's binary cannot be had here). What is real is
// the bundle (the SDK bundled into CommonJS, import.meta.url rewritten), main.ts's mapping onto
// the facade, and the embedded master it starts and stops.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { isProcessAlive } from '@runner/plugin-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const desktopDir = resolve(import.meta.dirname, '..');

let work: string;
let child: ChildProcessWithoutNullStreams;
const events: unknown[][] = [];
let waiters: (() => void)[] = [];

/** Resolves with the first event (seen or to come) that `match` accepts. */
function event(match: (e: unknown[]) => boolean, timeoutMs = 20_000): Promise<unknown[]> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no such event within ${timeoutMs} ms; saw ${JSON.stringify(events)}`)),
      timeoutMs,
    );
    const check = (): boolean => {
      const found = events.find(match);
      if (!found) return false;
      clearTimeout(timer);
      resolvePromise(found);
      return true;
    };
    const wait = (): void => {
      if (!check()) waiters.push(wait);
    };
    wait();
  });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'runner-desktop-bundle-'));
  const hook = join(desktopDir, 'src', 'electron-double-hook.cjs');
  child = spawn(process.execPath, ['--require', hook, join(desktopDir, 'dist', 'main.cjs')], {
    env: {
      PATH: process.env.PATH,
      DOUBLE_USER_DATA: join(work, 'user-data'),
      DOUBLE_APP_PATH: desktopDir,
      RUNNER_BIN: resolve(desktopDir, '..', 'kernel', 'bin', 'runner.js'),
    },
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    events.push(JSON.parse(line));
    const pending = waiters;
    waiters = [];
    pending.forEach((w) => w());
  });
  child.stderr.resume();
});
afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await rm(work, { recursive: true, force: true });
});

describe('dist/main.cjs', () => {
  it('starts the embedded master, shows it with its credential, and stops it on quit', async () => {
    const [, url] = (await event((e) => e[0] === 'loadURL')) as [string, string];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const [, options] = (await event((e) => e[0] === 'window')) as [
      string,
      { webPreferences: Record<string, unknown> },
    ];
    expect(options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
    expect(options.webPreferences.preload).toBe(join(desktopDir, 'dist', 'preload.cjs'));
    await stat(options.webPreferences.preload as string);
    const [, icon] = (await event((e) => e[0] === 'tray')) as [string, string];
    expect((await stat(icon)).isFile()).toBe(true);
    await event((e) => e[0] === 'show');
    expect(events.filter((e) => e[0] === 'ipc').map((e) => e[1])).toEqual([
      'runner-desktop:choose-connection',
      'runner-desktop:open-workflow-file',
      'runner-desktop:notify-run-failed',
      'runner-desktop:connections:list',
      'runner-desktop:connections:add',
      'runner-desktop:connections:remove',
      'runner-desktop:connections:open',
    ]);
    expect(events.find((e) => e[0] === 'menu')?.[1]).toEqual([
      'File',
      'editMenu',
      'View',
      'Connection',
      'windowMenu',
      'Help',
    ]);
    await event((e) => e[0] === 'tooltip' && String(e[1]).startsWith('runner: Embedded master is up'));

    child.stdin.write(`headers ${url}api/v1/agents\n`);
    const [, headers] = (await event((e) => e[0] === 'headers')) as [string, Record<string, string>];
    expect((await fetch(`${url}api/v1/agents`, { headers })).status).toBe(200);

    const dataDir = join(work, 'user-data', 'master');
    const { pid } = JSON.parse(await readFile(join(dataDir, 'master.json'), 'utf8')) as { pid: number };
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin.write('quit\n');
    expect(await exited).toBe(0);
    expect(events.filter((e) => e[0] === 'quit').map((e) => e[1])).toEqual(['deferred', 'now']);
    expect(isProcessAlive(pid)).toBe(false);
    await expect(stat(join(dataDir, 'master.json'))).rejects.toThrow(/ENOENT/);
  });
});
