import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isProcessAlive, writeLogin } from '@runner/plugin-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNELS } from './bridge.js';
import { ConnectionStore } from './connections.js';
import type { MenuItem } from './facade.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';
import { DesktopShell, connectArgument, isMasterRequest, type ShellOptions } from './shell.js';

const desktopDir = resolve(import.meta.dirname, '..');
const runnerJs = resolve(desktopDir, '..', 'kernel', 'bin', 'runner.js');

let userData: string;
let electron: FakeElectron;
let shells: DesktopShell[] = [];
let servers: Server[] = [];
beforeEach(async () => {
  userData = await mkdtemp(join(tmpdir(), 'runner-desktop-shell-'));
  electron = fakeElectron(userData);
});
afterEach(async () => {
  await Promise.all(shells.map((s) => s.stop()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  shells = [];
  servers = [];
  await rm(userData, { recursive: true, force: true });
});

function options(
  // RUNNER_DATA_DIR: never the real ~/.runner of the machine the tests run on.
  env: NodeJS.ProcessEnv = { PATH: process.env.PATH, RUNNER_BIN: runnerJs, RUNNER_DATA_DIR: join(userData, 'cli') },
  argv = ['runner'],
): ShellOptions {
  return {
    argv,
    facade: electron,
    env,
    platform: 'linux',
    execPath: process.execPath,
    appPath: desktopDir,
    preloadPath: '/app/dist/preload.cjs',
    connectionsPreloadPath: '/app/dist/preload-connections.cjs',
    connectionsPageUrl: 'file:///app/static/connections.html',
    trayIconPath: '/app/build/tray.png',
    log: () => undefined,
    trayIntervalMs: 60_000,
  };
}

async function start(env?: NodeJS.ProcessEnv, argv?: string[]): Promise<DesktopShell | undefined> {
  const shell = await DesktopShell.start(options(env, argv));
  if (shell) shells.push(shell);
  return shell;
}

/** A remote master as far as the shell sees one: /api/v1/health behind a bearer token. */
async function remoteMaster(token: string): Promise<string> {
  const server = createServer((request, response) => {
    const ok = request.headers.authorization === `Bearer ${token}`;
    response.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    response.end(JSON.stringify(ok ? { status: 'ok', version: 'remote-1' } : { error: { code: 'unauthorized' } }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function findItem(menu: MenuItem[], label: RegExp): MenuItem | undefined {
  for (const item of menu) {
    if (item.label && label.test(item.label)) return item;
    const inner = item.submenu && findItem(item.submenu, label);
    if (inner) return inner;
  }
  return undefined;
}

describe('isMasterRequest', () => {
  it("matches the master's origin, its WebSocket included, and nothing else", () => {
    const origin = 'http://127.0.0.1:4000';
    expect(isMasterRequest('http://127.0.0.1:4000/api/v1/agents', origin)).toBe(true);
    expect(isMasterRequest('ws://127.0.0.1:4000/api/v1/ws', origin)).toBe(true);
    expect(isMasterRequest('wss://127.0.0.1:4000/api/v1/ws', origin)).toBe(false);
    expect(isMasterRequest('http://127.0.0.1:4001/', origin)).toBe(false);
    expect(isMasterRequest('http://localhost:4000/', origin)).toBe(false);
    expect(isMasterRequest('http://127.0.0.1:4000/', undefined)).toBe(false);
    expect(isMasterRequest('::', origin)).toBe(false);
  });
});

describe('connectArgument', () => {
  it('reads --connect <url> and --connect=<url>', () => {
    expect(connectArgument(['runner', '--connect', 'https://m:1'])).toBe('https://m:1');
    expect(connectArgument(['runner', '--no-sandbox', '--connect=https://m:2'])).toBe('https://m:2');
    expect(connectArgument(['runner', '.'])).toBeUndefined();
  });
});

describe('DesktopShell', () => {
  it('opens the master named by --connect, with the token runner login saved for it, and no embedded master', async () => {
    const remote = await remoteMaster('rnr_login');
    const cliDir = join(userData, 'cli');
    await writeLogin(cliDir, remote, { token: 'rnr_login', user: 'ops' });
    const shell = (await start({ RUNNER_DATA_DIR: cliDir, RUNNER_BIN: '/nonexistent' }, [
      'runner',
      '--connect',
      `${remote}/api/v1`,
    ]))!;
    expect(shell.current).toEqual({ id: expect.any(String), name: remote.replace('http://', ''), url: remote });
    expect(shell.embeddedMaster).toBeUndefined();
    expect(electron.windows[0].loaded).toEqual([`${remote}/`]);
    expect(await electron.sendHeaders(`${remote}/api/v1/agents`)).toEqual({ Authorization: 'Bearer rnr_login' });
    await expect.poll(() => electron.trays[0].toolTip, { timeout: 15_000 }).toMatch(/ is up \(runner remote-1\)$/);

    // A second launch with --connect switches the running app; the same URL is not saved twice.
    const other = await remoteMaster('unused');
    electron.secondInstance(['runner', `--connect=${other}`]);
    await expect.poll(() => electron.windows[0].loaded.at(-1), { timeout: 15_000 }).toBe(`${other}/`);
    expect(await electron.sendHeaders(`${other}/api/v1/agents`)).toEqual({});
    electron.secondInstance(['runner', '--connect', remote]);
    await expect.poll(() => electron.windows[0].loaded.at(-1), { timeout: 15_000 }).toBe(`${remote}/`);
    expect((await ConnectionStore.open(userData, electron.safeStorage)).list().map((c) => c.url)).toEqual([
      remote,
      other,
    ]);
  });

  it('quits at once when another instance holds the lock', async () => {
    electron.lockHeld = false;
    expect(await start()).toBeUndefined();
    expect(electron.quits).toBe(1);
    expect(electron.windows).toEqual([]);
  });

  it('runs the embedded master, shows it with its credential, switches to a remote master and back, and stops it on quit', async () => {
    const remote = await remoteMaster('rnr_remote');
    const store = await ConnectionStore.open(userData, electron.safeStorage);
    await store.add({ name: 'lab', url: remote, token: 'rnr_remote' });

    const shell = (await start())!;
    const master = shell.embeddedMaster!;
    const window = electron.windows[0];
    expect(window.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
    expect(window.options.webPreferences.preload).toBe('/app/dist/preload.cjs');
    expect(window.loaded).toEqual([`${master.base}/`]);
    expect(window.shown).toBe(0);
    window.ready();
    expect(window.shown).toBe(1);

    // The credential goes on the master's requests (its WebSocket too), in the main process only.
    const token = (await readFile(join(userData, 'master', 'auth', 'local.token'), 'utf8')).trim();
    const expected = { Authorization: `Bearer ${token}` };
    expect(token).toMatch(/^rnr_local_/);
    expect(await electron.sendHeaders(`${master.base}/api/v1/agents`, { Accept: 'application/json' })).toEqual({
      Accept: 'application/json',
      ...expected,
    });
    expect(await electron.sendHeaders(`${master.base.replace('http', 'ws')}/api/v1/ws`)).toEqual(expected);
    // What the window sends gets through the master's authentication.
    const injected = await electron.sendHeaders(`${master.base}/api/v1/agents`, {});
    expect((await fetch(`${master.base}/api/v1/agents`, { headers: injected })).status).toBe(200);
    expect((await fetch(`${master.base}/api/v1/agents`)).status).toBe(401);
    expect(await electron.sendHeaders('https://example.org/', {})).toEqual({});
    expect(await electron.sendHeaders(`${master.base}/x`, { authorization: 'Bearer mine' })).toEqual({
      authorization: 'Bearer mine',
    });
    expect(electron.receiveHeaders(`${master.base}/`, {})['Content-Security-Policy']).toHaveLength(1);
    expect(electron.requestPermission('media', `${master.base}/`)).toBe(false);

    // The tray follows the master's health; the menu marks the embedded master as current.
    const tray = electron.trays[0];
    await expect.poll(() => tray.toolTip, { timeout: 15_000 }).toMatch(/^runner: Embedded master is up \(runner /);
    expect(findItem(electron.applicationMenu, /^Embedded master/)).toMatchObject({ type: 'radio', checked: true });
    expect(findItem(electron.applicationMenu, /^lab /)).toMatchObject({ type: 'radio', checked: false });
    expect(findItem(electron.applicationMenu, /Toggle|DevTools/)).toBeUndefined();
    expect(JSON.stringify(electron.applicationMenu)).toContain('toggleDevTools');

    // The page asks to switch: the native chooser lists both; the user picks lab.
    electron.answers.push(1);
    const chosen = await electron.invoke(CHANNELS.chooseConnection, `${master.base}/settings`);
    expect(chosen).toEqual({ id: expect.any(String), name: 'lab', url: remote });
    expect(electron.messageBoxes.at(-1)!.buttons).toEqual(['Embedded master', 'lab', 'Cancel']);
    expect(window.loaded.at(-1)).toBe(`${remote}/`);
    expect(await master.exited).toMatchObject({ code: 0 });
    expect(isProcessAlive(master.pid)).toBe(false);
    expect(shell.embeddedMaster).toBeUndefined();
    expect(await electron.sendHeaders(`${remote}/api/v1/agents`)).toEqual({ Authorization: 'Bearer rnr_remote' });
    expect(await electron.sendHeaders(`${master.base}/api/v1/agents`)).toEqual({});
    await expect.poll(() => tray.toolTip, { timeout: 15_000 }).toBe('runner: lab is up (runner remote-1)');
    // The old master's pages may no longer call the bridge.
    await expect(
      electron.invoke(CHANNELS.notifyRunFailed, `${master.base}/`, { runId: 'r', workflow: 'w' }),
    ).rejects.toThrow(/refused a call/);
    expect((await ConnectionStore.open(userData, electron.safeStorage)).last).toBe(
      chosen && (chosen as { id: string }).id,
    );

    // A second launch brings the minimized window forward.
    window.minimized = true;
    electron.secondInstance();
    expect(window.restored).toBe(1);
    expect(window.focused).toBe(1);

    // Back to the embedded master from the tray menu, clicked twice in a hurry: one new master starts.
    findItem(tray.menu, /^Embedded master/)!.click!();
    findItem(tray.menu, /^Embedded master/)!.click!();
    await expect.poll(() => shell.embeddedMaster?.pid, { timeout: 20_000 }).toBeGreaterThan(0);
    const second = shell.embeddedMaster!;
    await expect.poll(() => window.loaded.filter((u) => u === `${second.base}/`).length, { timeout: 15_000 }).toBe(2);
    expect(electron.messageBoxes.filter((b) => b.message === 'runner cannot show a master')).toEqual([]);

    // Quitting waits for the master to stop, then quits.
    expect(electron.beforeQuit()).toBe(true);
    expect(electron.beforeQuit()).toBe(true);
    await shell.stop();
    expect(electron.quits).toBe(1);
    expect(await second.exited).toMatchObject({ code: 0 });
    expect(tray.destroyed).toBe(true);
    expect(electron.beforeQuit()).toBe(false);
  });

  it("connects even when runner login's file cannot be read", async () => {
    const remote = await remoteMaster('unused');
    await mkdir(join(userData, 'cli', 'auth'), { recursive: true });
    await writeFile(join(userData, 'cli', 'auth', 'logins.json'), '{ not json');
    const shell = (await start(undefined, ['runner', '--connect', remote]))!;
    expect(shell.current?.url).toBe(remote);
    expect(electron.messageBoxes).toEqual([]);
  });

  it('removes the connection shown, after asking, and shows the embedded master instead', async () => {
    const remote = await remoteMaster('rnr_x');
    const shell = (await start(undefined, ['runner', '--connect', remote]))!;
    const remove = () => findItem(electron.applicationMenu, /^Remove This Connection/)!;
    expect(remove().enabled).toBe(true);
    electron.answers.push(1);
    remove().click!();
    await expect.poll(() => electron.messageBoxes.length, { timeout: 10_000 }).toBe(1);
    expect(shell.current?.url).toBe(remote);
    electron.answers.push(0);
    remove().click!();
    await expect.poll(() => shell.current?.id, { timeout: 20_000 }).toBe('embedded');
    expect(electron.messageBoxes.map((b) => b.message)).toEqual([
      `Remove the connection ${remote.replace('http://', '')}?`,
      `Remove the connection ${remote.replace('http://', '')}?`,
    ]);
    expect((await ConnectionStore.open(userData, electron.safeStorage)).list()).toEqual([]);
    expect(remove().enabled).toBe(false);
  });

  it('manages saved connections in a window of their own, answering its page only', async () => {
    const remote = await remoteMaster('rnr_lab');
    const shell = (await start())!;
    const page = 'file:///app/static/connections.html';
    findItem(electron.applicationMenu, /^Manage Connections/)!.click!();
    const connectionsWindow = electron.windows[1];
    expect(connectionsWindow.options.webPreferences).toMatchObject({
      preload: '/app/dist/preload-connections.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
    expect(connectionsWindow.loaded).toEqual([page]);
    connectionsWindow.ready();
    expect(connectionsWindow.shown).toBe(1);
    findItem(electron.applicationMenu, /^Manage Connections/)!.click!();
    expect(electron.windows).toHaveLength(2);
    expect(connectionsWindow.focused).toBe(1);
    expect(connectionsWindow.navigate('file:///etc/passwd')).toBe(false);
    expect(connectionsWindow.navigate('https://example.org/')).toBe(false);
    expect(electron.openedExternally).toEqual(['https://example.org/']);

    const embeddedBase = shell.current!.url;
    expect(await electron.invoke('runner-desktop:connections:list', page)).toEqual({
      current: 'embedded',
      connections: [{ id: 'embedded', name: 'Embedded master', url: embeddedBase }],
    });
    // The master's pages cannot reach these calls.
    await expect(electron.invoke('runner-desktop:connections:list', `${embeddedBase}/`)).rejects.toThrow(
      /only the connections page may call/,
    );
    await expect(electron.invoke('runner-desktop:connections:add', page, { name: 5 })).rejects.toThrow(
      /name must be a string/,
    );
    await expect(
      electron.invoke('runner-desktop:connections:add', page, { name: 'x', url: 'ftp://x' }),
    ).rejects.toThrow(/must be http:\/\/ or https:\/\//);
    const lab = (await electron.invoke('runner-desktop:connections:add', page, {
      name: 'lab',
      url: remote,
      token: 'rnr_lab',
    })) as { id: string };
    expect(findItem(electron.applicationMenu, /^lab /)).toMatchObject({ type: 'radio', checked: false });

    await electron.invoke('runner-desktop:connections:open', page, lab.id);
    expect(electron.windows[0].loaded.at(-1)).toBe(`${remote}/`);
    expect(connectionsWindow.destroyed).toBe(true);
    expect(await electron.sendHeaders(`${remote}/api/v1/agents`)).toEqual({ Authorization: 'Bearer rnr_lab' });

    await expect(electron.invoke('runner-desktop:connections:remove', page, 'embedded')).rejects.toThrow(
      /the embedded master is not a saved connection/,
    );
    await expect(electron.invoke('runner-desktop:connections:remove', page, 'nope')).rejects.toThrow(
      /no connection nope/,
    );
    await electron.invoke('runner-desktop:connections:remove', page, lab.id);
    expect(shell.current?.id).toBe('embedded');
    expect((await ConnectionStore.open(userData, electron.safeStorage)).list()).toEqual([]);
  });

  it('opens the embedded master when the last connection is no longer saved', async () => {
    await writeFile(join(userData, 'connections.json'), JSON.stringify({ version: 1, connections: [], last: 'gone' }));
    const shell = (await start())!;
    expect(shell.current?.id).toBe('embedded');
    expect(electron.messageBoxes).toEqual([]);
  });

  it('says why no master can be shown and offers the ways on', async () => {
    electron.answers.push(2);
    const shell = (await start({ RUNNER_BIN: '/nonexistent/runner' }))!;
    expect(shell.current).toBeUndefined();
    expect(electron.messageBoxes).toEqual([
      {
        title: 'runner',
        message: 'runner cannot show a master',
        detail: 'RUNNER_BIN=/nonexistent/runner is not a file',
        buttons: ['Retry Embedded Master', 'Choose Connection…', 'Quit'],
      },
    ]);
    expect(electron.quits).toBe(1);
  });

  it('quits when the last window closes, except on macOS', async () => {
    electron.answers.push(2);
    await start({ RUNNER_BIN: '/nonexistent/runner' });
    electron.allWindowsClosed();
    expect(electron.quits).toBe(2);

    const mac = fakeElectron(userData);
    mac.answers.push(2);
    shells.push(
      (await DesktopShell.start({
        ...options({ RUNNER_BIN: '/nonexistent/runner' }),
        facade: mac,
        platform: 'darwin',
      }))!,
    );
    mac.allWindowsClosed();
    expect(mac.quits).toBe(1);
    expect(mac.applicationMenu[0]).toEqual({ role: 'appMenu' });
  });
});
