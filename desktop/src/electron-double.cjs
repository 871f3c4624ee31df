// A stand-in for the `electron` module, for running the built dist/main.cjs under plain Node
// (Electron's binary cannot be had on our machines): the calls main.ts makes, with Electron's
// names and shapes, each reported on stdout as a JSON line; stdin plays the network layer
// (`headers <url>`) and the user (`quit`). Loaded by electron-double-hook.cjs. Used by
// main-bundle.test.ts and test/bench/desktop-start.mjs.
/* global require, module */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS module, as Electron's is */
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
    this.webContents = Object.assign(new EventEmitter(), {
      setWindowOpenHandler: (h) => (this.openHandler = h),
      getURL: () => this.url,
    });
  }
  loadURL(url) {
    this.url = url;
    report('loadURL', url);
    setImmediate(() => this.emit('ready-to-show'));
    return Promise.resolve();
  }
  show() {
    report('show');
  }
  focus() {}
  restore() {}
  isMinimized() {
    return false;
  }
  isDestroyed() {
    return false;
  }
}
class Tray {
  constructor(image) {
    report('tray', image.path);
  }
  setToolTip(text) {
    report('tooltip', text);
  }
  setContextMenu() {}
  destroy() {
    report('tray-destroyed');
  }
}
class Notification extends EventEmitter {
  static isSupported() {
    return true;
  }
  constructor(options) {
    super();
    this.options = options;
  }
  show() {
    report('notification', this.options);
  }
}
module.exports = {
  app,
  nativeImage: {
    createFromPath: (path) => ({ path, resize: () => ({ path, resized: true }) }),
  },
  BrowserWindow,
  Tray,
  Notification,
  Menu: {
    buildFromTemplate: (template) => ({ template }),
    setApplicationMenu: (menu) =>
      report(
        'menu',
        menu.template.map((item) => item.label ?? item.role),
      ),
  },
  dialog: {
    showErrorBox: (title, content) => report('errorBox', title, content),
    showMessageBox: async (...args) => {
      report('messageBox', args.at(-1).message, args.at(-1).detail);
      return { response: 2 };
    },
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
require('node:readline')
  .createInterface({ input: process.stdin })
  .on('line', (line) => {
    const [command, argument] = line.split(' ');
    if (command === 'headers')
      beforeSendHeaders({ url: argument, requestHeaders: {} }, (r) => report('headers', r.requestHeaders));
    if (command === 'quit') app.quit();
  });
