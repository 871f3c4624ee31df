// The credentials convention shared by the master client and the auth plugin (`runner login`):
// a CLI call to a master sends `Authorization: Bearer <token>` where the token is, in order,
// RUNNER_TOKEN; the entry for that master's URL in `<dataDir>/auth/logins.json`; and
// `<dataDir>/auth/local.token` when the master is this data directory's own. The files are
// written 0600 in a 0700 directory.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidInputError } from './errors.js';

/** One saved login: what `runner login` stores for a master URL. */
export interface MasterLogin {
  token: string;
  user?: string;
  /** ISO 8601; a login past it is not sent. */
  expires_at?: string;
}

/** `<dataDir>/auth/logins.json`: master URL (as `http://host:port`) to its login. */
export type MasterLogins = Record<string, MasterLogin>;

/** Where the saved logins and the local token live. */
export function authPaths(dataDir: string): { dir: string; logins: string; localToken: string } {
  const dir = join(dataDir, 'auth');
  return { dir, logins: join(dir, 'logins.json'), localToken: join(dir, 'local.token') };
}

/** The saved logins; none when the file does not exist. A malformed file is an error naming it. */
export async function readLogins(dataDir: string): Promise<MasterLogins> {
  const { logins } = authPaths(dataDir);
  let text: string;
  try {
    text = await readFile(logins, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      `${logins} is not valid JSON (${(error as Error).message}); log in again with \`runner login\``,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidInputError(
      `${logins} must hold an object of master URL to login; log in again with \`runner login\``,
    );
  }
  return parsed as MasterLogins;
}

/** Saves (or, with `undefined`, forgets) the login for `url`; the file is written 0600 in a 0700 directory. */
export async function writeLogin(dataDir: string, url: string, login: MasterLogin | undefined): Promise<void> {
  const { dir, logins } = authPaths(dataDir);
  const all = await readLogins(dataDir);
  const key = loginKey(url);
  if (login === undefined) delete all[key];
  else all[key] = login;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  // Through a temporary file and a rename: never half a file where the logins were.
  const temporary = `${logins}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, logins);
}

/** The key of a master URL in logins.json: its origin and path, without `/api/v1` or a trailing slash. */
export function loginKey(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`;
}

/**
 * The Authorization header value for a call to `endpoint`, by the convention above; undefined
 * when there are no credentials (the master may not ask for any).
 */
export async function credentialFor(
  endpoint: { base: string; local: boolean },
  dataDir: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  if (env.RUNNER_TOKEN) return `Bearer ${env.RUNNER_TOKEN}`;
  const login = (await readLogins(dataDir))[loginKey(endpoint.base)];
  if (login?.token && !(login.expires_at && Date.parse(login.expires_at) <= Date.now())) return `Bearer ${login.token}`;
  if (endpoint.local) {
    try {
      const token = (await readFile(authPaths(dataDir).localToken, 'utf8')).trim();
      if (token) return `Bearer ${token}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return undefined;
}
