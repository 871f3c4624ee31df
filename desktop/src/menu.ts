// The application menu and the tray menu, as templates built from the shell's state and actions.
// A packaged app has no reload or developer tools: a user has no use for them and they would let
// anyone at the keyboard run code in the page that holds the session.
import type { MenuItem } from './facade.js';
import type { ConnectionInfo } from './bridge.js';
import type { MasterStatus } from './tray.js';
import { EMBEDDED } from './connections.js';

export interface MenuActions {
  chooseConnection(): void;
  switchTo(id: string): void;
  removeCurrent(): void;
  manageConnections(): void;
  importLogins(): void;
  showWindow(): void;
  about(): void;
  quit(): void;
}

export interface MenuState {
  appName: string;
  isPackaged: boolean;
  platform: NodeJS.Platform;
  /** Every master the app knows, the embedded one first. */
  connections: ConnectionInfo[];
  /** The id of the one shown now. */
  current: string | undefined;
}

function connectionItems(state: MenuState, actions: MenuActions): MenuItem[] {
  return state.connections.map((c) => ({
    label: `${c.name} (${c.url})`,
    type: 'radio' as const,
    checked: c.id === state.current,
    click: () => actions.switchTo(c.id),
  }));
}

export function applicationMenu(state: MenuState, actions: MenuActions): MenuItem[] {
  const view: MenuItem[] = [
    { role: 'resetZoom' },
    { role: 'zoomIn' },
    { role: 'zoomOut' },
    { type: 'separator' },
    { role: 'togglefullscreen' },
  ];
  if (!state.isPackaged) view.unshift({ role: 'reload' }, { role: 'toggleDevTools' }, { type: 'separator' });
  const menu: MenuItem[] = [
    {
      label: 'File',
      submenu: [
        { label: 'Choose Connection…', accelerator: 'CmdOrCtrl+K', click: actions.chooseConnection },
        { label: 'Manage Connections…', click: actions.manageConnections },
        { label: 'Import Logins from runner login', click: actions.importLogins },
        { type: 'separator' },
        state.platform === 'darwin' ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    { label: 'View', submenu: view },
    {
      label: 'Connection',
      submenu: [
        ...connectionItems(state, actions),
        { type: 'separator' },
        // The embedded master is not a saved connection: nothing to remove.
        { label: 'Remove This Connection…', enabled: state.current !== EMBEDDED, click: actions.removeCurrent },
      ],
    },
    { role: 'windowMenu' },
    { label: 'Help', submenu: [{ label: `About ${state.appName}`, click: actions.about }] },
  ];
  // macOS puts the app's own menu (About, Hide, Quit) first.
  if (state.platform === 'darwin') menu.unshift({ role: 'appMenu' });
  return menu;
}

export function trayMenu(state: MenuState, status: MasterStatus, actions: MenuActions): MenuItem[] {
  const current = state.connections.find((c) => c.id === state.current);
  return [
    { label: `${current?.name ?? 'master'}: ${status.state} (${status.detail})`, enabled: false },
    { type: 'separator' },
    { label: `Show ${state.appName}`, click: actions.showWindow },
    { label: 'Connection', submenu: connectionItems(state, actions) },
    { type: 'separator' },
    { label: 'Quit', click: actions.quit },
  ];
}
