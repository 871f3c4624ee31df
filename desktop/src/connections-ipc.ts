// The main-process side of the connections window's bridge. Calls are answered only for the
// app's own connections page (its file URL, exactly); the master's pages never reach these.
import type { ConnectionInfo } from './bridge.js';
import { CONNECTION_CHANNELS, parseId, parseNewConnection } from './connections-bridge.js';
import type { ConnectionStore } from './connections.js';
import type { ElectronFacade, IpcCaller } from './facade.js';

export interface ConnectionsIpcDependencies {
  ipcMain: ElectronFacade['ipcMain'];
  /** The file URL of static/connections.html. */
  pageUrl: string;
  store: ConnectionStore;
  /** Every master the app knows (the embedded one first) and the one shown. */
  connections(): ConnectionInfo[];
  current(): string | undefined;
  /** Shows a master in the main window and closes the connections window. */
  open(id: string): Promise<void>;
  /** After a removal: the shell leaves a connection that is gone. */
  removed(id: string): Promise<void>;
  /** After any change: menus list the connections. */
  changed(): void;
}

export function registerConnectionsHandlers(deps: ConnectionsIpcDependencies): void {
  const check = (channel: string, caller: IpcCaller, args: unknown[], count: number): void => {
    if (caller.senderUrl !== deps.pageUrl) {
      throw new Error(
        `${channel}: refused a call from ${caller.senderUrl ?? 'an unknown frame'}: only the connections page may call`,
      );
    }
    if (args.length !== count) throw new TypeError(`${channel}: takes ${count} argument(s), got ${args.length}`);
  };
  const knownId = (channel: string, value: unknown): string => {
    const id = parseId(channel, value);
    if (!deps.connections().some((c) => c.id === id)) throw new Error(`${channel}: no connection ${id}`);
    return id;
  };
  deps.ipcMain.handle(CONNECTION_CHANNELS.list, async (caller, ...args) => {
    check(CONNECTION_CHANNELS.list, caller, args, 0);
    return { current: deps.current(), connections: deps.connections() };
  });
  deps.ipcMain.handle(CONNECTION_CHANNELS.add, async (caller, ...args) => {
    check(CONNECTION_CHANNELS.add, caller, args, 1);
    const added = await deps.store.add(parseNewConnection(args[0]));
    deps.changed();
    return added;
  });
  deps.ipcMain.handle(CONNECTION_CHANNELS.remove, async (caller, ...args) => {
    check(CONNECTION_CHANNELS.remove, caller, args, 1);
    const id = knownId(CONNECTION_CHANNELS.remove, args[0]);
    if (id === 'embedded')
      throw new Error(`${CONNECTION_CHANNELS.remove}: the embedded master is not a saved connection`);
    await deps.store.remove(id);
    deps.changed();
    await deps.removed(id);
    return undefined;
  });
  deps.ipcMain.handle(CONNECTION_CHANNELS.open, async (caller, ...args) => {
    check(CONNECTION_CHANNELS.open, caller, args, 1);
    await deps.open(knownId(CONNECTION_CHANNELS.open, args[0]));
    return undefined;
  });
}
