import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { RunnerError } from '@runner/plugin-sdk';

/** The system user a root master creates and runs local side effects as, by default. */
export const DEFAULT_EXEC_USER = 'runner-exec';

/** Who local task scripts with side effects run as (engine.run_as, resolved). */
export type RunAs =
  | { kind: 'self' }
  | { kind: 'user'; name: string; uid: number; gid: number; home: string }
  | { kind: 'refused'; reason: string };

interface Account {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/**
 * Resolves `engine.run_as`: `auto` (the default) is the dedicated system user `runner-exec`
 * (created on first start) when the master runs as root, and a refusal otherwise, since a
 * process cannot become another user without root; `self` accepts running them as the master's
 * own user; any other value names an existing user, which needs a root master.
 */
export function resolveRunAs(configured: string, dataDir: string): RunAs {
  const me = userInfo();
  const root = process.getuid?.() === 0;
  if (configured === 'self' || process.platform === 'win32') return { kind: 'self' };
  if (configured === 'auto' && !root) {
    return {
      kind: 'refused',
      reason:
        `local tasks with side effects are refused: the master runs as ${me.username}, not root, so it cannot run ` +
        `them as another user, and as ${me.username} they could read the master's data directory ${dataDir} ` +
        `(tokens, keys, the store). Set engine.run_as: self to accept that risk, run the task on an agent ` +
        `(delegate_to), or start the master as root (it then runs them as the system user ${DEFAULT_EXEC_USER})`,
    };
  }
  const name = configured === 'auto' ? DEFAULT_EXEC_USER : configured;
  if (name === me.username) return { kind: 'self' };
  if (!root) {
    return {
      kind: 'refused',
      reason: `local tasks with side effects are refused: engine.run_as names ${name}, but the master runs as ${me.username}, not root, and cannot become another user (set engine.run_as: self, or start the master as root)`,
    };
  }
  const account = lookUpUser(name) ?? (configured === 'auto' ? createSystemUser(name) : undefined);
  if (!account)
    throw new RunnerError('invalid_config', `engine.run_as: no user named "${name}" on this host`, { status: 400 });
  if (account.uid === 0) {
    throw new RunnerError(
      'invalid_config',
      `engine.run_as: "${name}" is root (uid 0); name an unprivileged user, or self`,
      {
        status: 400,
      },
    );
  }
  return { kind: 'user', ...account };
}

/** The passwd entry of `name`, or undefined when there is none. */
export function lookUpUser(name: string): Account | undefined {
  let line: string;
  try {
    line = execFileSync('getent', ['passwd', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
  const [user, , uid, gid, , home] = line.split(':');
  if (!user) return undefined;
  return { name: user, uid: Number(uid), gid: Number(gid), home: home || '/' };
}

function createSystemUser(name: string): Account {
  const home = `/var/lib/${name}`;
  try {
    execFileSync(
      'useradd',
      [
        '--system',
        '--user-group',
        '--create-home',
        '--home-dir',
        home,
        '--shell',
        '/usr/sbin/nologin',
        '--comment',
        'runner local task scripts',
        name,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new RunnerError(
      'invalid_config',
      `engine.run_as: cannot create the system user ${name} (useradd: ${stderr || String(error)}); create it, name another user, or set engine.run_as: self`,
      { status: 500, cause: error },
    );
  }
  const account = lookUpUser(name);
  if (!account) throw new RunnerError('invalid_config', `engine.run_as: useradd made no user ${name}`, { status: 500 });
  return account;
}
