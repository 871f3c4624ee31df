// A facade of Electron for the tests: it records what the shell asks of Electron and lets a test
// play the user (press a dialog button, navigate, call over IPC) and the network layer (send a
// request through the header rewriting). safeStorage "encrypts" by reversing and prefixing, so a
// test can see that what is stored is not the token.
import type {
  ElectronFacade,
  IpcCaller,
  MenuItem,
  PreventableEvent,
  RequestHeaders,
  ResponseHeaders,
  TrayFacade,
  WindowFacade,
  WindowOptions,
} from './facade.js';

export interface FakeWindow extends WindowFacade {
  options: WindowOptions;
  loaded: string[];
  shown: number;
  focused: number;
  restored: number;
  minimized: boolean;
  destroyed: boolean;
  /** Plays a navigation; returns whether the shell let it happen. */
  navigate(url: string): boolean;
  /** Plays window.open; returns the handler's answer. */
  open(url: string): { action: 'deny' };
  /** Fires ready-to-show. */
  ready(): void;
  close(): void;
}

export interface FakeTray extends TrayFacade {
  iconPath: string;
  toolTip: string;
  menu: MenuItem[];
  destroyed: boolean;
}

export interface FakeElectron extends ElectronFacade {
  createWindow(options: WindowOptions): FakeWindow;
  createTray(iconPath: string): FakeTray;
  windows: FakeWindow[];
  trays: FakeTray[];
  applicationMenu: MenuItem[];
  openedExternally: string[];
  notifications: { title: string; body: string; onClick?: () => void }[];
  messageBoxes: { title: string; message: string; detail?: string; buttons: string[] }[];
  quits: number;
  lockHeld: boolean;
  encryptionAvailable: boolean;
  storageBackend: string;
  /** The next dialog answers, in order: a button index for message boxes, file paths for open dialogs. */
  answers: (number | string[] | 'cancel')[];
  secondInstance(argv?: string[]): void;
  allWindowsClosed(): void;
  /** Plays a quit: the before-quit listeners run; returns whether one of them cancelled it. */
  beforeQuit(): boolean;
  /** Calls an IPC channel as a frame at `senderUrl` would. */
  invoke(channel: string, senderUrl: string | undefined, ...args: unknown[]): Promise<unknown>;
  sendHeaders(url: string, headers?: RequestHeaders): Promise<RequestHeaders>;
  receiveHeaders(url: string, headers?: ResponseHeaders): ResponseHeaders;
  requestPermission(permission: string, url: string): boolean;
}

export function fakeElectron(userData: string): FakeElectron {
  const listeners = {
    secondInstance: [] as ((argv: string[]) => void)[],
    allClosed: [] as (() => void)[],
    beforeQuit: [] as ((e: PreventableEvent) => void)[],
  };
  const handlers = new Map<string, (caller: IpcCaller, ...args: unknown[]) => Promise<unknown>>();
  let rewriteRequest: ((url: string, headers: RequestHeaders) => Promise<RequestHeaders>) | undefined;
  let rewriteResponse: ((url: string, headers: ResponseHeaders) => ResponseHeaders) | undefined;
  let permissions: ((permission: string, url: string) => boolean) | undefined;

  const nextAnswer = (): number | string[] | 'cancel' => {
    const answer = fake.answers.shift();
    if (answer === undefined) throw new Error('fake Electron: a dialog opened that the test gave no answer for');
    return answer;
  };

  const fake: FakeElectron = {
    windows: [],
    trays: [],
    applicationMenu: [],
    openedExternally: [],
    notifications: [],
    messageBoxes: [],
    quits: 0,
    lockHeld: true,
    encryptionAvailable: true,
    storageBackend: 'gnome_libsecret',
    answers: [],
    app: {
      requestSingleInstanceLock: () => fake.lockHeld,
      onSecondInstance: (l) => void listeners.secondInstance.push(l),
      onWindowAllClosed: (l) => void listeners.allClosed.push(l),
      onBeforeQuit: (l) => void listeners.beforeQuit.push(l),
      whenReady: async () => undefined,
      userDataPath: () => userData,
      isPackaged: false,
      name: 'runner',
      version: '0.1.0',
      quit: () => void fake.quits++,
    },
    createWindow(options) {
      const navigateListeners: ((event: PreventableEvent, url: string) => void)[] = [];
      let openHandler: ((details: { url: string }) => { action: 'deny' }) | undefined;
      const ready: (() => void)[] = [];
      const closed: (() => void)[] = [];
      const window: FakeWindow = {
        options,
        loaded: [],
        shown: 0,
        focused: 0,
        restored: 0,
        minimized: false,
        destroyed: false,
        webContents: {
          onNavigate: (l) => void navigateListeners.push(l),
          setWindowOpenHandler: (h) => void (openHandler = h),
          getURL: () => window.loaded.at(-1) ?? '',
        },
        loadURL: async (url) => void window.loaded.push(url),
        show: () => void window.shown++,
        focus: () => void window.focused++,
        restore: () => {
          window.restored++;
          window.minimized = false;
        },
        isMinimized: () => window.minimized,
        isDestroyed: () => window.destroyed,
        onceReadyToShow: (l) => void ready.push(l),
        onClosed: (l) => void closed.push(l),
        navigate(url) {
          let prevented = false;
          for (const l of navigateListeners) l({ preventDefault: () => void (prevented = true) }, url);
          if (!prevented) window.loaded.push(url);
          return !prevented;
        },
        open(url) {
          if (!openHandler) throw new Error('fake Electron: no window open handler set');
          return openHandler({ url });
        },
        ready: () => ready.splice(0).forEach((l) => l()),
        close() {
          if (window.destroyed) return;
          window.destroyed = true;
          closed.forEach((l) => l());
        },
      };
      fake.windows.push(window);
      return window;
    },
    createTray(iconPath) {
      const tray: FakeTray = {
        iconPath,
        toolTip: '',
        menu: [],
        destroyed: false,
        setToolTip: (text) => void (tray.toolTip = text),
        setContextMenu: (template) => void (tray.menu = template),
        destroy: () => void (tray.destroyed = true),
      };
      fake.trays.push(tray);
      return tray;
    },
    setApplicationMenu: (template) => void (fake.applicationMenu = template),
    shell: { openExternal: async (url) => void fake.openedExternally.push(url) },
    dialog: {
      async showOpenDialog() {
        const answer = nextAnswer();
        if (answer === 'cancel') return { canceled: true, filePaths: [] };
        if (!Array.isArray(answer)) throw new Error('fake Electron: an open dialog needs file paths as its answer');
        return { canceled: false, filePaths: answer };
      },
      async showMessageBox(_window, options) {
        fake.messageBoxes.push({
          title: options.title,
          message: options.message,
          detail: options.detail,
          buttons: options.buttons,
        });
        const answer = nextAnswer();
        if (answer === 'cancel') return options.cancelId ?? options.buttons.length - 1;
        if (typeof answer !== 'number')
          throw new Error('fake Electron: a message box needs a button index as its answer');
        return answer;
      },
      showErrorBox: (title, content) => void fake.messageBoxes.push({ title, message: content, buttons: [] }),
    },
    notify: (options, onClick) => void fake.notifications.push({ ...options, onClick }),
    ipcMain: {
      handle(channel, listener) {
        if (handlers.has(channel)) throw new Error(`fake Electron: a second handler for ${channel}`);
        handlers.set(channel, listener);
      },
    },
    safeStorage: {
      isEncryptionAvailable: () => fake.encryptionAvailable,
      backend: () => fake.storageBackend,
      encryptString: (plain) => Buffer.from(`enc:${[...plain].reverse().join('')}`),
      decryptString: (encrypted) => {
        if (!encrypted.toString().startsWith('enc:'))
          throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
        return [...encrypted.toString().slice(4)].reverse().join('');
      },
    },
    session: {
      onBeforeSendHeaders: (rewrite) => void (rewriteRequest = rewrite),
      onHeadersReceived: (rewrite) => void (rewriteResponse = rewrite),
      setPermissionRequestHandler: (decide) => void (permissions = decide),
    },
    secondInstance: (argv = ['runner']) => listeners.secondInstance.forEach((l) => l(argv)),
    allWindowsClosed: () => listeners.allClosed.forEach((l) => l()),
    beforeQuit() {
      let prevented = false;
      for (const l of listeners.beforeQuit) l({ preventDefault: () => void (prevented = true) });
      return prevented;
    },
    async invoke(channel, senderUrl, ...args) {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`fake Electron: no handler for ${channel}`);
      return handler({ senderUrl }, ...args);
    },
    sendHeaders: async (url, headers = {}) => (rewriteRequest ? rewriteRequest(url, headers) : headers),
    receiveHeaders: (url, headers = {}) => (rewriteResponse ? rewriteResponse(url, headers) : headers),
    requestPermission: (permission, url) => (permissions ? permissions(permission, url) : true),
  };
  return fake;
}
