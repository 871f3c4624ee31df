// A real OpenSSH server on loopback for tests: Debian's openssh-server started with a temporary host
// key and config, for a throwaway user with a temporary key pair (and a password when asked). Needs
// root (useradd) and /usr/sbin/sshd; `sshdAvailable()` says whether both are there.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasTool, isRoot } from './tools.js';

export const SSHD = '/usr/sbin/sshd';

export function sshdAvailable(): boolean {
  return isRoot() && (existsSync(SSHD) || hasTool(SSHD, 'openssh-server'));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as { port: number };
      server.close(() => resolve(p));
    });
  });
}

export interface TestSshd {
  port: number;
  user: string;
  home: string;
  uid: number;
  /** The temporary directory holding the keys and the config. */
  work: string;
  /** The client's private key file (its `.pub` beside it is authorized). */
  clientKey: string;
  /** The host key file in use (its `.pub` beside it). */
  hostKey: string;
  /** The user's password, when `password` was asked for (PasswordAuthentication yes). */
  password?: string;
  /** What sshd printed so far (LogLevel VERBOSE). */
  log(): string;
  /** `SHA256:...` of the host key in use. */
  hostFingerprint(): string;
  /** Writes authorized_keys; `path` replaces the user's PATH (PermitUserEnvironment PATH). */
  authorize(path?: string): void;
  /** Restarts sshd with a new host key on the same port (a reinstalled host, or a man in the middle). */
  changeHostKey(): Promise<void>;
  /** Stops sshd, kills the user's processes and removes the user. */
  stop(): Promise<void>;
}

/**
 * useradd and userdel lock /etc/passwd; other tests on the machine may hold the lock a moment
 * ("cannot lock /etc/passwd; try again later", exit 1 or 10): tried again for up to 20 s.
 */
function accountCommand(command: string, args: string[]): void {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      return;
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? '');
      if (!/cannot lock/.test(stderr) || Date.now() > deadline) throw error;
      execFileSync('sleep', ['0.2']);
    }
  }
}

/** Starts sshd for a new throwaway user. `extraConfig` lines are added to sshd_config. */
export async function startSshd(options: { password?: boolean; extraConfig?: string[] } = {}): Promise<TestSshd> {
  const user = `runner-test-${randomBytes(4).toString('hex')}`;
  const home = `/home/${user}`;
  const work = mkdtempSync(join(tmpdir(), 'runner-sshd-'));
  chmodSync(work, 0o755);
  const clientKey = join(work, 'client_ed25519');
  let hostKey = join(work, 'host_ed25519');
  accountCommand('useradd', ['-m', '-s', '/bin/bash', user]);
  const password = options.password ? randomBytes(12).toString('hex') : undefined;
  // useradd leaves the password "!" (locked), which sshd without PAM refuses even for keys.
  if (password) execFileSync('chpasswd', { input: `${user}:${password}\n` });
  else accountCommand('usermod', ['-p', '*', user]);
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  execFileSync('chown', [`${user}:${user}`, join(home, '.ssh')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', clientKey]);
  const authorize = (path?: string) => {
    const key = readFileSync(`${clientKey}.pub`, 'utf8').trim();
    writeFileSync(join(home, '.ssh/authorized_keys'), `${path ? `environment="PATH=${path}" ` : ''}${key}\n`);
    execFileSync('chown', [`${user}:${user}`, join(home, '.ssh/authorized_keys')]);
    chmodSync(join(home, '.ssh/authorized_keys'), 0o600);
  };
  authorize();
  const port = await freePort();
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  let sshd: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    writeFileSync(
      join(work, 'sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `PidFile ${join(work, 'sshd.pid')}`,
        'AuthorizedKeysFile .ssh/authorized_keys',
        'PubkeyAuthentication yes',
        `PasswordAuthentication ${password ? 'yes' : 'no'}`,
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'PermitRootLogin no',
        'PermitUserEnvironment PATH',
        `AllowUsers ${user}`,
        'LogLevel VERBOSE',
        'Subsystem sftp internal-sftp',
        ...(options.extraConfig ?? []),
        '',
      ].join('\n'),
    );
    const child = spawn(SSHD, ['-D', '-e', '-f', join(work, 'sshd_config')], { stdio: ['ignore', 'pipe', 'pipe'] });
    sshd = child;
    await new Promise<void>((resolve, reject) => {
      let mine = '';
      const onData = (d: Buffer) => {
        log += d.toString();
        mine += d.toString();
        if (mine.includes(`Server listening on 127.0.0.1 port ${port}`)) resolve();
      };
      child.stderr?.on('data', onData);
      child.stdout?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`sshd exited (${code}):\n${log}`)));
    });
  };
  const stopSshd = async () => {
    const child = sshd;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    // sshd stops at once at rest; on a loaded machine it is killed after 10 s rather than holding
    // the file's clean-up until its hook times out.
    const late = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(late);
  };
  const userPids = (): number[] => {
    try {
      return execFileSync('ps', ['-o', 'pid=', '-u', user], { encoding: 'utf8' })
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((n) => n > 0);
    } catch {
      return [];
    }
  };
  await start();
  return {
    port,
    user,
    home,
    uid,
    work,
    clientKey,
    get hostKey() {
      return hostKey;
    },
    password,
    log: () => log,
    hostFingerprint: () =>
      execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKey}.pub`], { encoding: 'utf8' }).split(' ')[1],
    authorize,
    async changeHostKey() {
      await stopSshd();
      hostKey = join(work, `host_ed25519_${randomBytes(3).toString('hex')}`);
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
      await start();
    },
    async stop() {
      for (const pid of userPids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      await stopSshd();
      for (let i = 0; i < 50 && userPids().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      try {
        accountCommand('userdel', ['-r', '-f', user]);
      } catch {}
    },
  };
}
