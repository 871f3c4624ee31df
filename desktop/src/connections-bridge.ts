// The connections window's bridge: `window.runnerConnections`, for the app's own page
// static/connections.html (listing, adding, removing and opening saved masters). A separate
// preload from the UI's: the master's pages never get these calls. Bundled into the sandboxed
// preload-connections.cjs, so it imports types only.
import type { ConnectionInfo, ContextBridgeLike, IpcRendererLike } from './bridge.js';

export const CONNECTION_CHANNELS = Object.freeze({
  list: 'runner-desktop:connections:list',
  add: 'runner-desktop:connections:add',
  remove: 'runner-desktop:connections:remove',
  open: 'runner-desktop:connections:open',
});

export interface NewConnection {
  name: string;
  url: string;
  token?: string;
}

export interface ConnectionsBridge {
  list(): Promise<{ current: string | undefined; connections: ConnectionInfo[] }>;
  add(connection: NewConnection): Promise<ConnectionInfo>;
  remove(id: string): Promise<void>;
  /** Shows that master in the main window and closes the connections window. */
  open(id: string): Promise<void>;
}

/** Checks what the page sent for add: strings of bounded length, the token optional. */
export function parseNewConnection(value: unknown): NewConnection {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('add: expected an object { name, url, token? }');
  }
  const record = value as Record<string, unknown>;
  for (const [field, max] of [
    ['name', 100],
    ['url', 2000],
  ] as const) {
    if (typeof record[field] !== 'string' || (record[field] as string).length > max) {
      throw new TypeError(`add: ${field} must be a string of at most ${max} characters`);
    }
  }
  const token = record.token;
  if (token !== undefined && (typeof token !== 'string' || token.length > 4096)) {
    throw new TypeError('add: token must be a string of at most 4096 characters');
  }
  return { name: record.name as string, url: record.url as string, ...(token ? { token: token as string } : {}) };
}

/** An id as the page sends it: a non-empty string of bounded length. */
export function parseId(channel: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > 100) {
    throw new TypeError(`${channel}: expected a connection id`);
  }
  return value;
}

export function exposeConnectionsBridge(contextBridge: ContextBridgeLike, ipcRenderer: IpcRendererLike): void {
  const bridge: ConnectionsBridge = {
    list: () => ipcRenderer.invoke(CONNECTION_CHANNELS.list) as ReturnType<ConnectionsBridge['list']>,
    add: ({ name, url, token }) =>
      ipcRenderer.invoke(CONNECTION_CHANNELS.add, { name, url, token }) as Promise<ConnectionInfo>,
    remove: async (id) => void (await ipcRenderer.invoke(CONNECTION_CHANNELS.remove, id)),
    open: async (id) => void (await ipcRenderer.invoke(CONNECTION_CHANNELS.open, id)),
  };
  contextBridge.exposeInMainWorld('runnerConnections', Object.freeze(bridge));
}
