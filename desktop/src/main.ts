// Electron's main process entry: maps the real Electron API onto the facade and starts the shell.
// The only module of the main process that imports `electron`; it holds no logic to test.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BrowserWindow,
  Menu,
  Notification,
  Tray,
  app,
  dialog,
  ipcMain,
  nativeImage,
  safeStorage,
  session,
  shell,
  type BaseWindow,
  type MenuItemConstructorOptions,
} from 'electron';
import type { ElectronFacade, MenuItem, WindowFacade } from './facade.js';
import { DesktopShell } from './shell.js';

const windows = new WeakMap<WindowFacade, BrowserWindow>();

function wrapWindow(window: BrowserWindow): WindowFacade {
  const contents = window.webContents;
  const facade: WindowFacade = {
    webContents: {
      onNavigate: (listener) => {
        contents.on('will-navigate', (event, url) => listener(event, url));
        contents.on('will-redirect', (event, url) => listener(event, url));
      },
      setWindowOpenHandler: (handler) => contents.setWindowOpenHandler(handler),
      getURL: () => contents.getURL(),
    },
    loadURL: (url) => window.loadURL(url),
    show: () => window.show(),
    focus: () => window.focus(),
    restore: () => window.restore(),
    close: () => window.close(),
    isMinimized: () => window.isMinimized(),
    isDestroyed: () => window.isDestroyed(),
    onceReadyToShow: (listener) => void window.once('ready-to-show', listener),
    onClosed: (listener) => void window.on('closed', listener),
  };
  windows.set(facade, window);
  return facade;
}

const menu = (template: MenuItem[]): Menu => Menu.buildFromTemplate(template as MenuItemConstructorOptions[]);
const parent = (window: WindowFacade | undefined): BaseWindow | undefined => (window ? windows.get(window) : undefined);

function electronFacade(): ElectronFacade {
  const defaultSession = session.defaultSession;
  return {
    app: {
      requestSingleInstanceLock: () => app.requestSingleInstanceLock(),
      onSecondInstance: (listener) => void app.on('second-instance', (_event, argv) => listener(argv)),
      onWindowAllClosed: (listener) => void app.on('window-all-closed', listener),
      onBeforeQuit: (listener) => void app.on('before-quit', listener),
      whenReady: () => app.whenReady(),
      userDataPath: () => app.getPath('userData'),
      isPackaged: app.isPackaged,
      name: app.getName(),
      version: app.getVersion(),
      quit: () => app.quit(),
    },
    createWindow: (options) => wrapWindow(new BrowserWindow(options)),
    createTray: (iconPath) => {
      // macOS draws tray images at their size in points: 32 px would be twice a menu bar icon.
      const image = nativeImage.createFromPath(iconPath);
      const tray = new Tray(process.platform === 'darwin' ? image.resize({ width: 16, height: 16 }) : image);
      return {
        setToolTip: (text) => tray.setToolTip(text),
        setContextMenu: (template) => tray.setContextMenu(menu(template)),
        destroy: () => tray.destroy(),
      };
    },
    setApplicationMenu: (template) => Menu.setApplicationMenu(menu(template)),
    shell: { openExternal: (url) => shell.openExternal(url) },
    dialog: {
      showOpenDialog: (window, options) => {
        const owner = parent(window);
        return owner ? dialog.showOpenDialog(owner, options) : dialog.showOpenDialog(options);
      },
      showMessageBox: async (window, options) => {
        const owner = parent(window);
        const result = owner ? await dialog.showMessageBox(owner, options) : await dialog.showMessageBox(options);
        return result.response;
      },
      showErrorBox: (title, content) => dialog.showErrorBox(title, content),
    },
    notify: (options, onClick) => {
      if (!Notification.isSupported()) return;
      const notification = new Notification(options);
      if (onClick) notification.on('click', onClick);
      notification.show();
    },
    ipcMain: {
      handle: (channel, listener) =>
        ipcMain.handle(channel, (event, ...args) => listener({ senderUrl: event.senderFrame?.url }, ...args)),
    },
    safeStorage: {
      isEncryptionAvailable: () => safeStorage.isEncryptionAvailable(),
      backend: () => (process.platform === 'linux' ? safeStorage.getSelectedStorageBackend() : 'os'),
      encryptString: (plain) => safeStorage.encryptString(plain),
      decryptString: (encrypted) => safeStorage.decryptString(encrypted),
    },
    session: {
      onBeforeSendHeaders: (rewrite) =>
        defaultSession.webRequest.onBeforeSendHeaders((details, callback) => {
          rewrite(details.url, details.requestHeaders).then(
            (requestHeaders) => callback({ requestHeaders }),
            () => callback({ requestHeaders: details.requestHeaders }),
          );
        }),
      onHeadersReceived: (rewrite) =>
        defaultSession.webRequest.onHeadersReceived((details, callback) =>
          callback({ responseHeaders: rewrite(details.url, details.responseHeaders ?? {}) }),
        ),
      setPermissionRequestHandler: (decide) =>
        defaultSession.setPermissionRequestHandler((contents, permission, callback, details) =>
          callback(decide(permission, details.requestingUrl ?? contents?.getURL() ?? '')),
        ),
    },
  };
}

// The app path is desktop/ in a checkout and the asar's root when packaged: dist/ and build/
// (the icons) are inside it in both.
void DesktopShell.start({
  facade: electronFacade(),
  env: process.env,
  platform: process.platform,
  execPath: process.execPath,
  appPath: app.getAppPath(),
  preloadPath: join(app.getAppPath(), 'dist', 'preload.cjs'),
  connectionsPreloadPath: join(app.getAppPath(), 'dist', 'preload-connections.cjs'),
  connectionsPageUrl: pathToFileURL(join(app.getAppPath(), 'static', 'connections.html')).href,
  trayIconPath: join(app.getAppPath(), 'build', 'tray.png'),
  log: (message) => console.error(`runner-desktop: ${message}`),
  argv: process.argv,
}).catch((error: Error) => {
  dialog.showErrorBox('runner could not start', error.stack ?? error.message);
  app.exit(1);
});
