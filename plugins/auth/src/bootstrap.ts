import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  authPaths,
  ConflictError,
  InvalidInputError,
  readOptional,
  writePrivateFile,
  type Logger,
  type Redactor,
} from '@runner/plugin-sdk';
import type { AuditLog } from './audit-log.js';
import { sha256, type Accounts } from './accounts.js';
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
  seen: { audit: AuditLog; redactor: Redactor },
): Promise<void> {
  const name = config.adminUsername;
  const given = await givenPassword(config, accounts);
  const now = new Date();
  // Whoever reads the audit log learns that the admin's password was set at start, and by what.
  const audited = (action: string) =>
    seen.audit.record({
      event: 'user.passwd',
      user: 'system',
      ip: '',
      resource: `user/${name}`,
      action,
      result: 'success',
      status: 200,
      request_id: '',
      detail: `admin account "${name}"`,
    });
  if (given !== undefined) {
    seen.redactor.addSecret(given);
    const existing = accounts.userByName(name);
    if (!existing) await accounts.addUser(name, 'admin', given, now);
    else {
      await accounts.setPassword(name, given, now);
      if (existing.role !== 'admin') await accounts.setRole(name, 'admin', now);
    }
    logger.info(`admin account "${name}" set from the given password`);
    audited(
      `start-up password reset from ${config.adminPasswordFile ? 'auth.admin_password_file' : 'auth.admin_password'}`,
    );
    return;
  }
  if (accounts.userCount() > 0) return;
  const password = randomPassword();
  seen.redactor.addSecret(password);
  try {
    await accounts.addUser(name, 'admin', password, now);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    // Another master sharing the store created it at the same moment: its data directory has the password.
    await accounts.reload();
    logger.info(`the admin account "${name}" was created by another master sharing the store`);
    return;
  }
  audited('first start: admin account created with a generated password');
  const file = authFiles(dataDir).adminPassword;
  await writePrivateFile(file, `${password}\n`);
  // warn, not info: the terminal shows warnings only, and this line is how the operator finds the password.
  logger.warn(
    `first start: created the admin account "${name}"; its password is in ${file} (readable by this user only)`,
  );
}

async function givenPassword(config: AuthConfig, accounts: Accounts): Promise<string | undefined> {
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
    return accounts.passwords.check(text.replace(/\r?\n$/, ''), 'auth.admin_password_file', config.adminUsername);
  }
  if (config.adminPassword !== undefined)
    return accounts.passwords.check(config.adminPassword, 'auth.admin_password', config.adminUsername);
  return undefined;
}

/** The session-signing key: `auth.jwt.secret`, else the one generated on first start. */
export async function jwtSecret(config: AuthConfig, dataDir: string, redactor: Redactor): Promise<Buffer> {
  if (config.jwtSecret) return Buffer.from(config.jwtSecret, 'utf8');
  const file = authFiles(dataDir).jwtSecret;
  const stored = (await readOptional(file))?.trim();
  // The key that signs every session: a run that printed it must show the mask.
  if (stored) redactor.addSecret(stored);
  if (stored) return Buffer.from(stored, 'utf8');
  const secret = randomBytes(48).toString('base64url');
  redactor.addSecret(secret);
  await writePrivateFile(file, `${secret}\n`);
  return Buffer.from(secret, 'utf8');
}

/**
 * A fresh local credential for this start, written to `<data-dir>/auth/local.token` (0600): the
 * CLI of this host's user sends it (see credentialFor in the SDK). A new one each start, so a copy
 * that leaked dies with the process. Returns its hash.
 */
export async function writeLocalToken(dataDir: string, redactor: Redactor): Promise<string> {
  const token = `rnr_local_${randomBytes(32).toString('base64url')}`;
  redactor.addSecret(token);
  await writePrivateFile(authFiles(dataDir).localToken, `${token}\n`);
  return sha256(token);
}
