// A real OpenSSH server on loopback for tests (Debian's openssh-server): a throwaway user with a
// temporary client key pair, a temporary host key and config, started with `sshd -D -e`. Needs
// root (useradd) and /usr/sbin/sshd; `sshdAvailable()` says whether this machine can run it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasTool, isRoot } from './tools.js';

const SSHD = '/usr/sbin/sshd';

export interface TestSshd {
  /** The throwaway user sshd lets in (only that one). */
  user: string;
  home: string;
  uid: number;
  port: number;
  /** A temporary directory (mode 0755) holding the keys and the config; tests may put files there. */
  dir: string;
  /** The client's private key (`.pub` beside it), authorized for `user`. */
  clientKey: string;
  /** The host's private key (`.pub` beside it). */
  hostKey: string;
  /** A known_hosts line for this server's key (`[127.0.0.1]:port ssh-ed25519 ...`). */
  knownHostsLine: string;
  /** What sshd logged so far. */
  log(): string;
  /** Writes the user's authorized_keys with the client key; `path` replaces its PATH. */
  authorize(path?: string): void;
  /** Processes of the throwaway user. */
  userPids(): number[];
  /** Stops sshd, kills the user's processes and removes the user. */
  stop(): Promise<void>;
}

/** Whether this machine can run the server: root, and sshd installed. */
export function sshdAvailable(): boolean {
  return isRoot() && (existsSync(SSHD) || hasTool(SSHD, 'openssh-server'));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts sshd on a free loopback port for a new throwaway user; resolves once it listens. */
export async function startSshd(prefix = 'runner-test'): Promise<TestSshd> {
  const user = `${prefix}-${randomBytes(4).toString('hex')}`;
  const home = `/home/${user}`;
  const dir = mkdtempSync(join(tmpdir(), 'runner-sshd-'));
  const clientKey = join(dir, 'client_ed25519');
  const hostKey = join(dir, 'host_ed25519');
  chmodSync(dir, 0o755);
  execFileSync('useradd', ['-m', '-s', '/bin/bash', user]);
  // useradd leaves the password "!" (locked), which sshd without PAM refuses even for keys.
  execFileSync('usermod', ['-p', '*', user]);
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
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'AuthorizedKeysFile .ssh/authorized_keys',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'PermitRootLogin no',
      'PermitUserEnvironment PATH',
      `AllowUsers ${user}`,
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  let log = '';
  const sshd: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      log += d.toString();
      if (log.includes(`Server listening on 127.0.0.1 port ${port}`)) resolve();
    };
    sshd.stderr?.on('data', onData);
    sshd.stdout?.on('data', onData);
    sshd.once('exit', (code) => reject(new Error(`sshd exited (${code}):\n${log}`)));
  });
  const userPids = () => {
    try {
      return execFileSync('ps', ['-o', 'pid=', '-u', user], { encoding: 'utf8' })
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((n) => n > 0);
    } catch {
      return [];
    }
  };
  const hostPub = readFileSync(`${hostKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
  return {
    user,
    home,
    uid,
    port,
    dir,
    clientKey,
    hostKey,
    knownHostsLine: `[127.0.0.1]:${port} ${hostPub}`,
    log: () => log,
    authorize,
    userPids,
    async stop() {
      for (const pid of userPids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      sshd.kill('SIGTERM');
      for (let i = 0; i < 50 && userPids().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      try {
        execFileSync('userdel', ['-r', '-f', user], { stdio: 'ignore' });
      } catch {}
    },
  };
}
