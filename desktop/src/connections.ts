// Saved connections to remote masters, and the app's few settings, in <userData>/connections.json.
// A connection's API token is stored encrypted with Electron's safeStorage (the OS keychain:
// Keychain, DPAPI, libsecret/kwallet); where there is no keychain, a token is refused rather than
// written as text a copy of the file would reveal.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError, loginKey, readLogins } from '@runner/plugin-sdk';
import type { ElectronFacade } from './facade.js';

/** The embedded master's id among the connections. */
export const EMBEDDED = 'embedded';

export interface SavedConnection {
  id: string;
  name: string;
  /** The master's base URL, `https://host:port` (no `/api/v1`, no credentials). */
  url: string;
  /** The API token, encrypted by safeStorage, base64; absent for a master that asks for none. */
  token?: string;
}

interface ConnectionsFile {
  version: 1;
  connections: SavedConnection[];
  /** The connection the app opened last: `embedded` or a saved connection's id. */
  last?: string;
  /** Where runner is, for the embedded master (else RUNNER_BIN, PATH, the checkout). */
  runnerPath?: string;
}

/** A connection as the renderer and the menus see it: never the token. */
export interface ConnectionSummary {
  id: string;
  name: string;
  url: string;
}

/** A remote master's URL as it is saved: http(s), no credentials, no `/api/v1`, no trailing slash. */
export function normalizeMasterUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new InvalidInputError(`connection URL "${raw}" is not a URL such as https://master.example:8080`, {
      field: 'url',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(`connection URL "${raw}" must be http:// or https://`, { field: 'url' });
  }
  if (url.username || url.password) {
    throw new InvalidInputError(`connection URL "${raw}" must not carry credentials; give the token apart`, {
      field: 'url',
    });
  }
  return loginKey(url.href);
}

export class ConnectionStore {
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    private readonly path: string,
    private data: ConnectionsFile,
    private readonly safeStorage: ElectronFacade['safeStorage'],
  ) {}

  /** Opens `<userDataDir>/connections.json` (none yet: an empty store). A malformed file is an error naming it. */
  static async open(userDataDir: string, safeStorage: ElectronFacade['safeStorage']): Promise<ConnectionStore> {
    const path = join(userDataDir, 'connections.json');
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return new ConnectionStore(path, { version: 1, connections: [] }, safeStorage);
    }
    let data: ConnectionsFile;
    try {
      data = JSON.parse(text) as ConnectionsFile;
    } catch (error) {
      throw new InvalidInputError(`${path} is not valid JSON (${(error as Error).message}); fix or delete it`);
    }
    if (data?.version !== 1 || !Array.isArray(data.connections)) {
      throw new InvalidInputError(`${path} must hold {"version": 1, "connections": [...]}; fix or delete it`);
    }
    return new ConnectionStore(path, data, safeStorage);
  }

  list(): ConnectionSummary[] {
    return this.data.connections.map(({ id, name, url }) => ({ id, name, url }));
  }

  get(id: string): ConnectionSummary | undefined {
    return this.list().find((c) => c.id === id);
  }

  get last(): string | undefined {
    return this.data.last;
  }

  get runnerPath(): string | undefined {
    return this.data.runnerPath;
  }

  /** Adds a connection (or replaces the one with the same URL); returns it. */
  async add(input: { name: string; url: string; token?: string }): Promise<ConnectionSummary> {
    const name = input.name.trim();
    if (name === '' || name.length > 100) {
      throw new InvalidInputError('a connection name must be 1 to 100 characters', { field: 'name' });
    }
    const url = normalizeMasterUrl(input.url);
    const token = input.token?.trim() ? this.encrypt(input.token.trim()) : undefined;
    const existing = this.data.connections.find((c) => c.url === url);
    const saved: SavedConnection = { id: existing?.id ?? randomUUID(), name, url, ...(token ? { token } : {}) };
    this.data.connections = [...this.data.connections.filter((c) => c.url !== url), saved];
    await this.save();
    return { id: saved.id, name, url };
  }

  async remove(id: string): Promise<void> {
    if (!this.data.connections.some((c) => c.id === id)) throw new NotFoundError(`no saved connection ${id}`);
    this.data.connections = this.data.connections.filter((c) => c.id !== id);
    if (this.data.last === id) delete this.data.last;
    await this.save();
  }

  /** The connection's `Authorization` header value, decrypted only in the main process. */
  authorization(id: string): string | undefined {
    const saved = this.data.connections.find((c) => c.id === id);
    if (!saved) throw new NotFoundError(`no saved connection ${id}`);
    if (!saved.token) return undefined;
    try {
      return `Bearer ${this.safeStorage.decryptString(Buffer.from(saved.token, 'base64'))}`;
    } catch (error) {
      // Another user's or another machine's keychain, or a keychain that was reset.
      throw new InvalidInputError(
        `cannot decrypt the saved token of connection "${saved.name}" (${saved.url}): ${(error as Error).message}; add the connection again (runner-desktop --connect ${saved.url})`,
        { field: 'token' },
      );
    }
  }

  async setLast(id: string): Promise<void> {
    if (id !== EMBEDDED && !this.data.connections.some((c) => c.id === id)) {
      throw new NotFoundError(`no saved connection ${id}`);
    }
    this.data.last = id;
    await this.save();
  }

  async setRunnerPath(path: string | undefined): Promise<void> {
    if (path === undefined) delete this.data.runnerPath;
    else this.data.runnerPath = path;
    await this.save();
  }

  /**
   * Adds the masters `runner login` saved in a data directory (`<dataDir>/auth/logins.json`),
   * so a user who logged in from the CLI need not type the token again. Expired logins are
   * skipped. Returns the connections added.
   */
  async importLogins(dataDir: string): Promise<ConnectionSummary[]> {
    const logins = await readLogins(dataDir);
    const added: ConnectionSummary[] = [];
    for (const [url, login] of Object.entries(logins)) {
      if (login.expires_at && Date.parse(login.expires_at) <= Date.now()) continue;
      const host = new URL(url).host;
      added.push(await this.add({ name: login.user ? `${login.user}@${host}` : host, url, token: login.token }));
    }
    return added;
  }

  private encrypt(token: string): string {
    if (!this.safeStorage.isEncryptionAvailable() || this.safeStorage.backend() === 'basic_text') {
      throw new InvalidInputError(
        'cannot store the token: no system keychain is available to encrypt it (on Linux, install and unlock gnome-keyring or kwallet)',
        { field: 'token' },
      );
    }
    return this.safeStorage.encryptString(token).toString('base64');
  }

  /** Writes the file; saves are queued, so two at once never share the temporary file. */
  private save(): Promise<void> {
    const write = async (): Promise<void> => {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const temporary = `${this.path}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(this.data, null, 2)}\n`, { mode: 0o600 });
      await chmod(temporary, 0o600);
      await rename(temporary, this.path);
    };
    const saved = this.saving.then(write, write);
    this.saving = saved.catch(() => undefined);
    return saved;
  }
}
