// The part of Electron's API the shell uses, as narrow interfaces. Only main.ts imports `electron`
// and maps the real objects onto these; everything else (window options, the navigation lock, the
// embedded master, connections, IPC, tray, menus) takes a facade, so it runs and is tested under
// plain Node with a fake one. Electron's own binary cannot be downloaded on our machines, and a
// shell whose logic needs it to be tested would be a shell whose logic is not tested.

/** What a listener may do with an Electron event: cancel it. */
export interface PreventableEvent {
  preventDefault(): void;
}

/** The renderer process of a window, as far as the shell touches it. */
export interface WebContentsFacade {
  /** `will-navigate` and `will-redirect`: the page (or a server redirect) is about to leave its URL. */
  onNavigate(listener: (event: PreventableEvent, url: string) => void): void;
  /** window.open and target=_blank: the shell answers every one with 'deny'. */
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
  /** The URL the page shows now. */
  getURL(): string;
}

/** Options the shell passes when it creates its window (a subset of BrowserWindowConstructorOptions). */
export interface WindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  title: string;
  show: boolean;
  backgroundColor: string;
  webPreferences: {
    preload: string;
    contextIsolation: true;
    sandbox: true;
    nodeIntegration: false;
    nodeIntegrationInWorker: false;
    nodeIntegrationInSubFrames: false;
    webviewTag: false;
    webSecurity: true;
    allowRunningInsecureContent: false;
    spellcheck: boolean;
  };
}

export interface WindowFacade {
  readonly webContents: WebContentsFacade;
  loadURL(url: string): Promise<void>;
  show(): void;
  focus(): void;
  restore(): void;
  close(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
  /** Once the first paint is ready: the window is shown then, never blank. */
  onceReadyToShow(listener: () => void): void;
  onClosed(listener: () => void): void;
}

/** A menu item, a subset of Electron's MenuItemConstructorOptions that Menu.buildFromTemplate takes as is. */
export interface MenuItem {
  label?: string;
  type?: 'normal' | 'separator' | 'submenu' | 'checkbox' | 'radio';
  role?:
    | 'quit'
    | 'reload'
    | 'forceReload'
    | 'toggleDevTools'
    | 'copy'
    | 'paste'
    | 'cut'
    | 'selectAll'
    | 'undo'
    | 'redo'
    | 'resetZoom'
    | 'zoomIn'
    | 'zoomOut'
    | 'togglefullscreen'
    | 'about'
    | 'minimize'
    | 'close'
    | 'appMenu'
    | 'editMenu'
    | 'windowMenu';
  accelerator?: string;
  enabled?: boolean;
  checked?: boolean;
  click?: () => void;
  submenu?: MenuItem[];
}

export interface TrayFacade {
  setToolTip(text: string): void;
  setContextMenu(template: MenuItem[]): void;
  destroy(): void;
}

/** What an IPC handler learns about its caller: the frame's URL, to check it is the UI's origin. */
export interface IpcCaller {
  senderUrl: string | undefined;
}

/** Headers as Electron's webRequest gives and takes them. */
export type RequestHeaders = Record<string, string>;
export type ResponseHeaders = Record<string, string[]>;

export interface SessionFacade {
  /** Rewrites each outgoing request's headers (the shell adds the master's Authorization here). */
  onBeforeSendHeaders(rewrite: (url: string, headers: RequestHeaders) => Promise<RequestHeaders>): void;
  /** Rewrites each response's headers (the shell adds its Content-Security-Policy here). */
  onHeadersReceived(rewrite: (url: string, headers: ResponseHeaders) => ResponseHeaders): void;
  /** Answers the page's permission requests (camera, geolocation, notifications...). */
  setPermissionRequestHandler(decide: (permission: string, requestingUrl: string) => boolean): void;
}

export interface OpenDialogResult {
  canceled: boolean;
  filePaths: string[];
}

export interface ElectronFacade {
  app: {
    requestSingleInstanceLock(): boolean;
    /** Another launch of the app: its command line (the lock holder gets it, the launch quits). */
    onSecondInstance(listener: (argv: string[]) => void): void;
    onWindowAllClosed(listener: () => void): void;
    /** `before-quit`; the listener may cancel the quit to finish work first, then quit again. */
    onBeforeQuit(listener: (event: PreventableEvent) => void): void;
    whenReady(): Promise<void>;
    /** `app.getPath('userData')`: the per-user directory the shell keeps its state in. */
    userDataPath(): string;
    /** Whether this is a packaged build (developer tools and reload are left out of its menus). */
    readonly isPackaged: boolean;
    readonly name: string;
    readonly version: string;
    quit(): void;
  };
  createWindow(options: WindowOptions): WindowFacade;
  createTray(iconPath: string): TrayFacade;
  setApplicationMenu(template: MenuItem[]): void;
  shell: { openExternal(url: string): Promise<void> };
  dialog: {
    showOpenDialog(
      window: WindowFacade | undefined,
      options: { title: string; properties: 'openFile'[]; filters: { name: string; extensions: string[] }[] },
    ): Promise<OpenDialogResult>;
    /** A message box; resolves to the index of the button pressed. */
    showMessageBox(
      window: WindowFacade | undefined,
      options: {
        type: 'none' | 'info' | 'error' | 'question' | 'warning';
        title: string;
        message: string;
        detail?: string;
        buttons: string[];
        cancelId?: number;
        defaultId?: number;
      },
    ): Promise<number>;
    showErrorBox(title: string, content: string): void;
  };
  /** A native notification; `onClick` when the user clicks it. */
  notify(options: { title: string; body: string }, onClick?: () => void): void;
  ipcMain: { handle(channel: string, listener: (caller: IpcCaller, ...args: unknown[]) => Promise<unknown>): void };
  safeStorage: {
    isEncryptionAvailable(): boolean;
    /** On Linux, 'basic_text' means no keyring: "encrypted" with a key built into Electron. */
    backend(): string;
    encryptString(plain: string): Buffer;
    decryptString(encrypted: Buffer): string;
  };
  session: SessionFacade;
}
