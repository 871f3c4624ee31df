// Runs the built dist/main.cjs, the file Electron would load, under Node with a stand-in for the
// `electron` module (Electron's binary cannot be had here). The stand-in implements the calls
// main.ts makes with Electron's names and shapes and reports them as JSON lines; what is real is
// the bundle (the SDK bundled into CommonJS, import.meta.url rewritten), main.ts's mapping onto
// the facade, and the embedded master it starts and stops.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { isProcessAlive } from '@runner/plugin-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const desktopDir = resolve(import.meta.dirname, '..');

// The stand-in for `electron`, loaded through a resolve hook so that the real package (whose
// index.js would download the binary) is never touched.
const ELECTRON_DOUBLE = String.raw`
const { EventEmitter } = require('node:events');
const report = (...event) => process.stdout.write(JSON.stringify(event) + '\n');
const app = new EventEmitter();
let beforeSendHeaders;
Object.assign(app, {
  isPackaged: false,
  requestSingleInstanceLock: () => true,
  whenReady: () => Promise.resolve(),
  getPath: (name) => (name === 'userData' ? process.env.DOUBLE_USER_DATA : undefined),
  getAppPath: () => process.env.DOUBLE_APP_PATH,
  getName: () => 'runner',
  getVersion: () => '0.1.0',
  quit() {
    let prevented = false;
    app.emit('before-quit', { preventDefault: () => (prevented = true) });
    report('quit', prevented ? 'deferred' : 'now');
    if (!prevented) process.exit(0);
  },
  exit: (code) => process.exit(code),
});
class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    report('window', options);
    this.webContents = Object.assign(new EventEmitter(), { setWindowOpenHandler: (h) => (this.openHandler = h), getURL: () => this.url });
  }
  loadURL(url) { this.url = url; report('loadURL', url); setImmediate(() => this.emit('ready-to-show')); return Promise.resolve(); }
  show() { report('show'); }
  focus() {}
  restore() {}
  isMinimized() { return false; }
  isDestroyed() { return false; }
}
class Tray {
  constructor(icon) { report('tray', icon); }
  setToolTip(text) { report('tooltip', text); }
  setContextMenu() {}
  destroy() { report('tray-destroyed'); }
}
class Notification extends EventEmitter {
  static isSupported() { return true; }
  constructor(options) { super(); this.options = options; }
  show() { report('notification', this.options); }
}
module.exports = {
  app,
  BrowserWindow,
  Tray,
  Notification,
  Menu: {
    buildFromTemplate: (template) => ({ template }),
    setApplicationMenu: (menu) => report('menu', menu.template.map((item) => item.label ?? item.role)),
  },
  dialog: {
    showErrorBox: (title, content) => report('errorBox', title, content),
    showMessageBox: async (...args) => { report('messageBox', args.at(-1).message, args.at(-1).detail); return { response: 2 }; },
    showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
  },
  ipcMain: { handle: (channel) => report('ipc', channel) },
  safeStorage: { isEncryptionAvailable: () => false, getSelectedStorageBackend: () => 'basic_text' },
  shell: { openExternal: async (url) => report('openExternal', url) },
  session: {
    defaultSession: {
      webRequest: {
        onBeforeSendHeaders: (listener) => (beforeSendHeaders = listener),
        onHeadersReceived: () => undefined,
      },
      setPermissionRequestHandler: () => undefined,
    },
  },
};
// The test plays the network layer and the user through stdin.
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, argument] = line.split(' ');
  if (command === 'headers') beforeSendHeaders({ url: argument, requestHeaders: {} }, (r) => report('headers', r.requestHeaders));
  if (command === 'quit') app.quit();
});
`;
const RESOLVE_HOOK = (double: string) => `
const Module = require('node:module');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'electron' ? ${JSON.stringify(double)} : resolveFilename.call(this, request, ...rest);
};
`;

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
  await writeFile(join(work, 'electron.cjs'), ELECTRON_DOUBLE);
  await writeFile(join(work, 'hook.cjs'), RESOLVE_HOOK(join(work, 'electron.cjs')));
  child = spawn(process.execPath, ['--require', join(work, 'hook.cjs'), join(desktopDir, 'dist', 'main.cjs')], {
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
