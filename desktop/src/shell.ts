// The desktop shell: one window showing one master's UI, the embedded master or a saved remote
// one, with the master's credential added to its requests in the main process (the page never
// holds it), a tray with the master's status, menus, and the bridge's IPC handlers. Everything
// Electron does goes through the facade; main.ts supplies the real one.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readLogins } from '@runner/plugin-sdk';
import type { ConnectionInfo } from './bridge.js';
import { ConnectionStore, EMBEDDED, normalizeMasterUrl } from './connections.js';
import { startEmbeddedMaster, type EmbeddedMaster } from './embedded-master.js';
import type { ElectronFacade, RequestHeaders, WindowFacade } from './facade.js';
import { registerIpcHandlers } from './ipc.js';
import { registerConnectionsHandlers } from './connections-ipc.js';
import { applicationMenu, trayMenu, type MenuActions, type MenuState } from './menu.js';
import { findRunner } from './runner-binary.js';
import { TrayStatus } from './tray.js';
import { lockNavigation, permissionAllowed, windowOptions, withContentSecurityPolicy } from './window.js';

export interface ShellOptions {
  facade: ElectronFacade;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Electron's executable: runs a runner.js as Node for the embedded master. */
  execPath: string;
  /** The app's directory (desktop/ in a checkout, the asar when packaged). */
  appPath: string;
  preloadPath: string;
  /** The connections window: its preload and its page (static/connections.html) as a file URL. */
  connectionsPreloadPath: string;
  connectionsPageUrl: string;
  trayIconPath: string;
  log(message: string): void;
  /** The app's command line: `--connect <url>` opens that master. */
  argv: string[];
  /** Seconds between the tray's health checks. */
  trayIntervalMs?: number;
}

/** The master the window shows. */
interface ActiveMaster extends ConnectionInfo {
  origin: string;
  authorization(): Promise<string | undefined>;
}

const EMBEDDED_NAME = 'Embedded master';

/**
 * Whether a request goes to the master at `origin`: the same scheme, host and port, with ws(s)
 * counted as http(s) so that the UI's WebSocket carries the credential too.
 */
export function isMasterRequest(url: string, origin: string | undefined): boolean {
  if (origin === undefined) return false;
  try {
    const target = new URL(url);
    const scheme = { 'ws:': 'http:', 'wss:': 'https:' }[target.protocol] ?? target.protocol;
    return `${scheme}//${target.host}` === origin;
  } catch {
    return false;
  }
}

/** The URL of `--connect <url>` or `--connect=<url>` on a command line, if any. */
export function connectArgument(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--connect') return argv[i + 1];
    if (argv[i].startsWith('--connect=')) return argv[i].slice('--connect='.length);
  }
  return undefined;
}

export class DesktopShell {
  private window: WindowFacade | undefined;
  private connectionsWindow: WindowFacade | undefined;
  private active: ActiveMaster | undefined;
  private embedded: EmbeddedMaster | undefined;
  private embeddedStarting: Promise<EmbeddedMaster> | undefined;
  private tray: TrayStatus | undefined;
  private quitting = false;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private stoppedAll = false;

  private constructor(
    private readonly options: ShellOptions,
    private readonly store: ConnectionStore,
  ) {}

  /**
   * Starts the app; resolves undefined when another instance holds the lock (that one is
   * brought forward, this one quits).
   */
  static async start(options: ShellOptions): Promise<DesktopShell | undefined> {
    const { app } = options.facade;
    if (!app.requestSingleInstanceLock()) {
      app.quit();
      return undefined;
    }
    await app.whenReady();
    const store = await ConnectionStore.open(app.userDataPath(), options.facade.safeStorage);
    const shell = new DesktopShell(options, store);
    shell.wire();
    try {
      const url = connectArgument(options.argv);
      if (url) await shell.connectTo(url);
      // A last connection removed from the file since falls back to the embedded master.
      else await shell.switchTo(store.last && store.get(store.last) ? store.last : EMBEDDED);
    } catch (error) {
      await shell.reportConnectionError(error as Error);
    }
    return shell;
  }

  /** The master shown now: its id and base URL. */
  get current(): ConnectionInfo | undefined {
    return this.active && { id: this.active.id, name: this.active.name, url: this.active.url };
  }

  get embeddedMaster(): EmbeddedMaster | undefined {
    return this.embedded;
  }

  /** Shows the saved connection `id` (or the embedded master) in the window. */
  async switchTo(id: string): Promise<ConnectionInfo> {
    let next: ActiveMaster;
    if (id === EMBEDDED) {
      // Two switches at once (a double click in the menu) start one master, not two on one data directory.
      const master =
        this.embedded ??
        (await (this.embeddedStarting ??= this.startEmbedded().finally(() => (this.embeddedStarting = undefined))));
      next = {
        id: EMBEDDED,
        name: EMBEDDED_NAME,
        url: master.base,
        origin: new URL(master.base).origin,
        authorization: () => master.authorization(),
      };
    } else {
      const saved = this.store.get(id);
      if (!saved) throw new Error(`no saved connection ${id}`);
      const authorization = this.store.authorization(id);
      next = { ...saved, origin: new URL(saved.url).origin, authorization: async () => authorization };
    }
    this.active = next;
    // Menus follow `active` at once, not after the file write (a menu must never offer the old master).
    this.renderMenus();
    await this.store.setLast(id);
    void this.tray?.follow({ name: next.name, base: next.url, authorization: next.authorization });
    if (id !== EMBEDDED && this.embedded) await this.stopEmbedded();
    await this.window?.loadURL(`${next.url}/`);
    return this.current!;
  }

  /**
   * Shows the master at `url` (`--connect <url>`), saving it as a connection first if it is new.
   * A login that `runner login` saved for that URL is taken as its token; otherwise the UI's
   * own login page asks.
   */
  async connectTo(url: string): Promise<ConnectionInfo> {
    const normalized = normalizeMasterUrl(url);
    const known = this.store.list().find((c) => c.url === normalized);
    if (known) return this.switchTo(known.id);
    // The CLI's logins are a convenience: a file that cannot be read does not stop the connection.
    const login = (
      await readLogins(this.runnerDataDir()).catch((error: Error) => {
        this.options.log(`not using runner login's saved logins: ${error.message}`);
        return {} as Awaited<ReturnType<typeof readLogins>>;
      })
    )[normalized];
    const usable = login?.token && !(login.expires_at && Date.parse(login.expires_at) <= Date.now());
    const added = await this.store.add({
      name: new URL(normalized).host,
      url: normalized,
      ...(usable ? { token: login.token } : {}),
    });
    this.renderMenus();
    return this.switchTo(added.id);
  }

  /** The native chooser behind the bridge's chooseConnection and the menu's Choose Connection. */
  async chooseConnection(): Promise<ConnectionInfo | null> {
    const choices = this.connections();
    const buttons = [...choices.map((c) => c.name), 'Cancel'];
    const pressed = await this.options.facade.dialog.showMessageBox(this.window, {
      type: 'question',
      title: 'Choose a master',
      message: 'Which master should runner show?',
      detail: choices.map((c) => `${c.name}: ${c.url}`).join('\n'),
      buttons,
      cancelId: buttons.length - 1,
      defaultId: Math.max(
        0,
        choices.findIndex((c) => c.id === this.active?.id),
      ),
    });
    const chosen = choices[pressed];
    if (!chosen) return null;
    return this.switchTo(chosen.id);
  }

  /** Stops the tray and the embedded master; the app then quits. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.tray?.stop();
      await this.stopEmbedded();
      this.stoppedAll = true;
    })();
    return this.stopping;
  }

  /** The CLI's data directory, where `runner login` keeps its logins. */
  private runnerDataDir(): string {
    return this.options.env.RUNNER_DATA_DIR || join(homedir(), '.runner');
  }

  private connections(): ConnectionInfo[] {
    const embedded = { id: EMBEDDED, name: EMBEDDED_NAME, url: this.embedded?.base ?? 'started on this computer' };
    return [embedded, ...this.store.list()];
  }

  private async startEmbedded(): Promise<EmbeddedMaster> {
    const { env, execPath, appPath, facade, log } = this.options;
    const runner = findRunner({ setting: this.store.runnerPath, env, appPath, execPath });
    const dataDir = join(facade.app.userDataPath(), 'master');
    log(`starting the embedded master: ${runner.source}, data directory ${dataDir}`);
    const master = await startEmbeddedMaster({ runner, dataDir, env });
    this.embedded = master;
    log(`embedded master (pid ${master.pid}) serves ${master.base}`);
    void master.exited.then(async ({ code, signal }) => {
      if (this.embedded !== master) return;
      this.embedded = undefined;
      if (this.quitting || this.stopped) return;
      log(`the embedded master stopped (${signal ?? `code ${code}`}):\n${master.output()}`);
      await this.tray?.check();
      if (this.active?.id === EMBEDDED) {
        await this.reportConnectionError(
          new Error(
            `The embedded master stopped (${signal ?? `exit code ${code}`}). Its last output:\n${master.output()}`,
          ),
        );
      }
    });
    return master;
  }

  private async stopEmbedded(): Promise<void> {
    const master = this.embedded;
    if (!master) return;
    this.embedded = undefined;
    await master.stop();
    this.options.log(`embedded master (pid ${master.pid}) stopped`);
  }

  /** Says what went wrong and offers the ways on: start the embedded master again, another master, quit. */
  private async reportConnectionError(error: Error): Promise<void> {
    this.options.log(error.message);
    const pressed = await this.options.facade.dialog.showMessageBox(this.window, {
      type: 'error',
      title: 'runner',
      message: 'runner cannot show a master',
      detail: error.message,
      buttons: ['Retry Embedded Master', 'Choose Connection…', 'Quit'],
      cancelId: 2,
      defaultId: 1,
    });
    try {
      if (pressed === 0) await this.switchTo(EMBEDDED);
      else if (pressed === 1) await this.chooseConnection();
      else this.options.facade.app.quit();
    } catch (next) {
      await this.reportConnectionError(next as Error);
    }
  }

  private wire(): void {
    const { facade, platform, log } = this.options;
    const { app, session } = facade;
    app.onSecondInstance((argv) => {
      this.showWindow();
      const url = connectArgument(argv);
      if (url) this.connectTo(url).catch((error: Error) => void this.reportConnectionError(error));
    });
    app.onWindowAllClosed(() => {
      // macOS apps stay in the dock with no window; the tray and dock bring it back.
      if (platform !== 'darwin') app.quit();
    });
    app.onBeforeQuit((event) => {
      if (this.stoppedAll) return;
      // Stop the embedded master first, so it is never left running without the app; a second
      // quit while it stops waits for the same stop.
      event.preventDefault();
      this.quitting = true;
      if (!this.stopping) void this.stop().finally(() => app.quit());
    });
    session.onBeforeSendHeaders(async (url, headers) => this.withCredential(url, headers));
    session.onHeadersReceived((url, headers) => withContentSecurityPolicy(url, headers, this.active?.origin));
    session.setPermissionRequestHandler((permission, url) => permissionAllowed(permission, url, this.active?.origin));
    registerIpcHandlers({
      facade,
      masterOrigin: () => this.active?.origin,
      window: () => this.window,
      chooseConnection: () => this.chooseConnection(),
      showWindow: () => this.showWindow(),
    });
    registerConnectionsHandlers({
      ipcMain: facade.ipcMain,
      pageUrl: this.options.connectionsPageUrl,
      store: this.store,
      connections: () => this.connections(),
      current: () => this.active?.id,
      open: async (id) => {
        await this.switchTo(id);
        this.connectionsWindow?.close();
      },
      removed: async (id) => {
        if (this.active?.id === id) await this.switchTo(EMBEDDED);
      },
      changed: () => this.renderMenus(),
    });
    this.createWindow();
    const tray = facade.createTray(this.options.trayIconPath);
    this.tray = new TrayStatus(
      tray,
      (status) => trayMenu(this.menuState(), status, this.menuActions()),
      this.options.trayIntervalMs,
    );
    this.renderMenus();
    log(`user data in ${app.userDataPath()}`);
  }

  /** Adds the master's credential to requests for the master, unless the page sent its own. */
  private async withCredential(url: string, headers: RequestHeaders): Promise<RequestHeaders> {
    const active = this.active;
    if (!active || !isMasterRequest(url, active.origin)) return headers;
    if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
    const authorization = await active.authorization();
    return authorization ? { ...headers, Authorization: authorization } : headers;
  }

  private createWindow(): WindowFacade {
    const { facade, preloadPath, log } = this.options;
    const window = facade.createWindow(windowOptions(preloadPath));
    lockNavigation(
      window.webContents,
      () => this.active?.origin,
      (url) => facade.shell.openExternal(url),
      log,
    );
    window.onceReadyToShow(() => window.show());
    window.onClosed(() => {
      if (this.window === window) this.window = undefined;
    });
    this.window = window;
    return window;
  }

  /** The app's own page for saved connections, in a window of its own (one at a time). */
  openConnectionsWindow(): WindowFacade {
    const { facade, connectionsPreloadPath, connectionsPageUrl, log } = this.options;
    const existing = this.connectionsWindow;
    if (existing && !existing.isDestroyed()) {
      existing.show();
      existing.focus();
      return existing;
    }
    const window = facade.createWindow({
      ...windowOptions(connectionsPreloadPath),
      width: 560,
      height: 600,
      title: 'Connections',
    });
    // Its page never navigates: every navigation is refused, http(s) links go to the browser.
    lockNavigation(
      window.webContents,
      () => undefined,
      (url) => facade.shell.openExternal(url),
      log,
    );
    window.onceReadyToShow(() => window.show());
    window.onClosed(() => {
      if (this.connectionsWindow === window) this.connectionsWindow = undefined;
    });
    this.connectionsWindow = window;
    void window.loadURL(connectionsPageUrl);
    return window;
  }

  private showWindow(): void {
    if (!this.window || this.window.isDestroyed()) {
      const window = this.createWindow();
      if (this.active) void window.loadURL(`${this.active.url}/`);
      return;
    }
    if (this.window.isMinimized()) this.window.restore();
    this.window.show();
    this.window.focus();
  }

  private menuState(): MenuState {
    const { facade, platform } = this.options;
    return {
      appName: facade.app.name,
      isPackaged: facade.app.isPackaged,
      platform,
      connections: this.connections(),
      current: this.active?.id,
    };
  }

  private menuActions(): MenuActions {
    const { facade, log } = this.options;
    const guarded = (action: () => Promise<unknown>) => () => {
      action().catch((error: Error) => void this.reportConnectionError(error));
    };
    return {
      chooseConnection: guarded(() => this.chooseConnection()),
      switchTo: (id) => guarded(() => this.switchTo(id))(),
      manageConnections: () => void this.openConnectionsWindow(),
      removeCurrent: guarded(async () => {
        const current = this.active;
        if (!current || current.id === EMBEDDED) return;
        const pressed = await facade.dialog.showMessageBox(this.window, {
          type: 'warning',
          title: 'Remove connection',
          message: `Remove the connection ${current.name}?`,
          detail: `${current.url}\nIts saved token is deleted; the window switches to the embedded master.`,
          buttons: ['Remove', 'Cancel'],
          cancelId: 1,
          defaultId: 1,
        });
        if (pressed !== 0) return;
        await this.store.remove(current.id);
        log(`removed the connection ${current.name} (${current.url})`);
        await this.switchTo(EMBEDDED);
      }),
      importLogins: guarded(async () => {
        const dataDir = this.runnerDataDir();
        const added = await this.store.importLogins(dataDir);
        this.renderMenus();
        log(`imported ${added.length} login(s) from ${dataDir}`);
        await facade.dialog.showMessageBox(this.window, {
          type: 'info',
          title: 'Import logins',
          message:
            added.length === 0
              ? `No logins found in ${dataDir}/auth/logins.json`
              : `Added ${added.length} connection(s)`,
          detail: added.map((c) => `${c.name}: ${c.url}`).join('\n'),
          buttons: ['OK'],
        });
      }),
      showWindow: () => this.showWindow(),
      about: guarded(() =>
        facade.dialog.showMessageBox(this.window, {
          type: 'info',
          title: `About ${facade.app.name}`,
          message: `${facade.app.name} ${facade.app.version}`,
          detail: `Showing ${this.active ? `${this.active.name} (${this.active.url})` : 'no master'}\nMaster: ${this.tray?.current.detail ?? 'unknown'}`,
          buttons: ['OK'],
        }),
      ),
      quit: () => facade.app.quit(),
    };
  }

  private renderMenus(): void {
    this.options.facade.setApplicationMenu(applicationMenu(this.menuState(), this.menuActions()));
    this.tray?.render();
  }
}
