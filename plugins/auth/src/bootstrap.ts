import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { authPaths, InvalidInputError, readOptional, writePrivateFile, type Logger } from '@runner/plugin-sdk';
import { checkPassword, sha256, type Accounts } from './accounts.js';
import type { AuthConfig } from './config.js';
import { randomPassword } from './passwords.js';

/** Where the plugin keeps its files: all 0600 in `<data-dir>/auth` (0700). */
export function authFiles(dataDir: string) {
  const { dir, localToken } = authPaths(dataDir);
  return {
    dir,
    localToken,
    adminPassword: join(dir, 'admin.password'),
    jwtSecret: join(dir, 'jwt.secret'),
  };
}

/**
 * The admin account. With a password given (`--password-file`, `RUNNER_AUTH_ADMIN_PASSWORD`) the
 * account `auth.admin_username` is created or updated with it (and made admin). Otherwise, on the
 * first start only (no user at all), it is created with a random password written once to
 * `<data-dir>/auth/admin.password`; the log says where, never what.
 */
export async function ensureAdmin(
  accounts: Accounts,
  config: AuthConfig,
  dataDir: string,
  logger: Logger,
): Promise<void> {
  const name = config.adminUsername;
  const given = await givenPassword(config);
  const now = new Date();
  if (given !== undefined) {
    const existing = accounts.userByName(name);
    if (!existing) await accounts.addUser(name, 'admin', given, now);
    else {
      await accounts.setPassword(name, given, now);
      if (existing.role !== 'admin') await accounts.setRole(name, 'admin', now);
    }
    logger.info(`admin account "${name}" set from the given password`);
    return;
  }
  if (accounts.userCount() > 0) return;
  const password = randomPassword();
  await accounts.addUser(name, 'admin', password, now);
  const file = authFiles(dataDir).adminPassword;
  await writePrivateFile(file, `${password}\n`);
  // warn, not info: the terminal shows warnings only, and this line is how the operator finds the password.
  logger.warn(
    `first start: created the admin account "${name}"; its password is in ${file} (readable by this user only)`,
  );
}

async function givenPassword(config: AuthConfig): Promise<string | undefined> {
  if (config.adminPasswordFile) {
    let text: string;
    try {
      text = await readFile(config.adminPasswordFile, 'utf8');
    } catch (error) {
      throw new InvalidInputError(
        `auth.admin_password_file (--password-file) ${config.adminPasswordFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        { field: 'auth.admin_password_file' },
      );
    }
    // The file's one line; a trailing newline from `echo` is not part of the password.
    return checkPassword(text.replace(/\r?\n$/, ''), 'auth.admin_password_file');
  }
  if (config.adminPassword !== undefined) return checkPassword(config.adminPassword, 'auth.admin_password');
  return undefined;
}

/** The session-signing key: `auth.jwt.secret`, else the one generated on first start. */
export async function jwtSecret(config: AuthConfig, dataDir: string): Promise<Buffer> {
  if (config.jwtSecret) return Buffer.from(config.jwtSecret, 'utf8');
  const file = authFiles(dataDir).jwtSecret;
  const stored = (await readOptional(file))?.trim();
  if (stored) return Buffer.from(stored, 'utf8');
  const secret = randomBytes(48).toString('base64url');
  await writePrivateFile(file, `${secret}\n`);
  return Buffer.from(secret, 'utf8');
}

/**
 * A fresh local credential for this start, written to `<data-dir>/auth/local.token` (0600): the
 * CLI of this host's user sends it (see credentialFor in the SDK). A new one each start, so a copy
 * that leaked dies with the process. Returns its hash.
 */
export async function writeLocalToken(dataDir: string): Promise<string> {
  const token = `rnr_local_${randomBytes(32).toString('base64url')}`;
  await writePrivateFile(authFiles(dataDir).localToken, `${token}\n`);
  return sha256(token);
}
