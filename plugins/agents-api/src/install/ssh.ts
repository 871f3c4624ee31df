import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { InvalidInputError, RunnerError } from '@runner/plugin-sdk';
import type { Client, ClientChannel, ConnectConfig } from 'ssh2';
import type { ExecResult, InstallSession } from './deploy.js';
import {
  fingerprint,
  hostLabel,
  keyTypeOf,
  preferredHostKeyAlgorithms,
  readKnownHosts,
  recordHostKey,
  verifyHostKey,
  type HostKeyVerdict,
} from './known-hosts.js';

export interface SshTarget {
  host: string;
  port: number;
  user: string;
  /** Private key file; otherwise ssh-agent, then the usual ~/.ssh/id_* files. */
  keyFile?: string;
  /** The user's known_hosts, read and appended to. /etc/ssh/ssh_known_hosts is read as well. */
  knownHostsFile: string;
  acceptNewHostKey: boolean;
}

export const GLOBAL_KNOWN_HOSTS = '/etc/ssh/ssh_known_hosts';

type Ssh2 = typeof import('ssh2');

/** ssh2 is CommonJS: Node's ESM import sees some of its names only on `default`. */
async function loadSsh2(): Promise<Ssh2> {
  const module = (await import('ssh2')) as Ssh2 & { default?: Ssh2 };
  return module.default ?? module;
}

export function defaultKnownHostsFile(): string {
  return join(homedir(), '.ssh', 'known_hosts');
}

/** The CLI's own SSH connection to the host an agent is installed on, with the operator's credentials. */
export class SshSession implements InstallSession {
  private constructor(
    private readonly client: Client,
    readonly target: SshTarget,
    /** What happened to the host key: `known`, or `recorded` on first contact. */
    readonly hostKey: { status: 'known' | 'recorded'; type: string; fingerprint: string; where: string },
  ) {}

  /**
   * Connects, verifying the host key against known_hosts first (before any credential is sent):
   * a known key passes, an unknown one passes only with `acceptNewHostKey` (and is recorded), a
   * changed or revoked one never does.
   */
  static async connect(target: SshTarget): Promise<SshSession> {
    const { Client } = await loadSsh2();
    const label = hostLabel(target.host, target.port);
    const files = [target.knownHostsFile, GLOBAL_KNOWN_HOSTS];
    const entries = await readKnownHosts(files);
    const auth = await credentials(target);
    const client = new Client();
    let verdict: HostKeyVerdict | undefined;
    let presented: Buffer | undefined;
    let recordError: Error | undefined;
    let hostKey: SshSession['hostKey'] | undefined;

    const config: ConnectConfig = {
      host: target.host,
      port: target.port,
      username: target.user,
      ...auth,
      readyTimeout: 20_000,
      keepaliveInterval: 15_000,
      algorithms: { serverHostKey: preferredHostKeyAlgorithms(entries, label) as never },
      // Not an async function: ssh2 takes any returned value as the verdict.
      hostVerifier: (key: Buffer, verify: (valid: boolean) => void) => {
        presented = key;
        verdict = verifyHostKey(entries, label, key);
        const type = keyTypeOf(key);
        if (verdict.kind === 'known') {
          hostKey = {
            status: 'known',
            type,
            fingerprint: fingerprint(key),
            where: `${verdict.entry.file}:${verdict.entry.line}`,
          };
          verify(true);
        } else if (verdict.kind === 'unknown' && target.acceptNewHostKey) {
          recordHostKey(target.knownHostsFile, label, key).then(
            () => {
              hostKey = { status: 'recorded', type, fingerprint: fingerprint(key), where: target.knownHostsFile };
              verify(true);
            },
            (error: Error) => {
              recordError = error;
              verify(false);
            },
          );
        } else {
          verify(false);
        }
      },
    };

    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', (error: Error & { level?: string; code?: string }) => {
        client.end();
        if (recordError) {
          reject(
            new RunnerError(
              'known_hosts_unwritable',
              `cannot record the host key in ${target.knownHostsFile}: ${recordError.message}`,
            ),
          );
        } else if (verdict && presented && verdict.kind !== 'known' && !hostKey) {
          reject(hostKeyError(verdict, label, presented, target));
        } else {
          reject(connectError(error, target, auth.describe));
        }
      });
      client.connect(config);
    });
    return new SshSession(client, target, hostKey as SshSession['hostKey']);
  }

  /** Runs a POSIX sh script (sent on stdin, so the login shell's syntax does not matter); see InstallSession. */
  exec(script: string, options: { step: string; timeoutMs?: number }): Promise<ExecResult> {
    return this.run(`/bin/sh -s ${options.step}`, (channel) => channel.end(script), options.timeoutMs ?? 120_000);
  }

  /** Runs `command` with `input` piped to its stdin (an upload), to the end of both. */
  async pipe(command: string, input: Readable, timeoutMs = 30 * 60_000): Promise<ExecResult> {
    let inputError: Error | undefined;
    const result = await this.run(
      command,
      (channel) => {
        input.once('error', (error) => {
          inputError = error;
          channel.close();
        });
        input.pipe(channel);
      },
      timeoutMs,
    );
    if (inputError)
      throw new RunnerError('upload_failed', `reading the upload failed: ${inputError.message}`, { cause: inputError });
    return result;
  }

  close(): void {
    this.client.end();
  }

  private run(command: string, feed: (channel: ClientChannel) => void, timeoutMs: number): Promise<ExecResult> {
    const where = `${this.target.user}@${hostLabel(this.target.host, this.target.port)}`;
    return new Promise((resolve, reject) => {
      this.client.exec(command, (error, channel) => {
        if (error) {
          reject(
            new RunnerError('ssh_failed', `cannot run a command on ${where}: ${error.message}`, {
              status: 502,
              cause: error,
            }),
          );
          return;
        }
        let stdout = '';
        let stderr = '';
        let code: number | null = null;
        let signal: string | undefined;
        const timer = setTimeout(() => {
          channel.close();
          reject(
            new RunnerError('ssh_timeout', `a command on ${where} did not finish within ${timeoutMs / 1000} s`, {
              status: 504,
            }),
          );
        }, timeoutMs);
        channel.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
        channel.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
        channel.on('exit', (exitCode: number | null, exitSignal?: string) => {
          code = exitCode;
          signal = exitSignal;
        });
        channel.once('error', (channelError: Error) => {
          clearTimeout(timer);
          reject(
            new RunnerError('ssh_failed', `the SSH channel to ${where} failed: ${channelError.message}`, {
              status: 502,
            }),
          );
        });
        channel.once('close', () => {
          clearTimeout(timer);
          resolve({ stdout, stderr, code, signal });
        });
        feed(channel);
      });
    });
  }
}

/** The credentials to offer, and a line that says which, for an authentication failure. */
async function credentials(
  target: SshTarget,
): Promise<{ privateKey?: Buffer; passphrase?: string; agent?: string; describe: string }> {
  const passphrase = process.env.RUNNER_SSH_KEY_PASSPHRASE || undefined;
  if (target.keyFile) {
    let privateKey: Buffer;
    try {
      privateKey = await readFile(target.keyFile);
    } catch (error) {
      throw new InvalidInputError(
        `--ssh-key ${target.keyFile}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
        {
          field: 'ssh-key',
        },
      );
    }
    await checkKey(privateKey, target.keyFile, passphrase);
    return { privateKey, passphrase, describe: `key ${target.keyFile}` };
  }
  const agent = process.env.SSH_AUTH_SOCK || undefined;
  const fallback = ['id_ed25519', 'id_ecdsa', 'id_rsa']
    .map((n) => join(homedir(), '.ssh', n))
    .find((f) => existsSync(f));
  if (!agent && !fallback) {
    throw new InvalidInputError(
      `no SSH credentials: give --ssh-key <file>, or run ssh-agent (SSH_AUTH_SOCK is not set and there is no ~/.ssh/id_ed25519, id_ecdsa or id_rsa)`,
      { field: 'ssh-key' },
    );
  }
  if (!fallback) return { agent, describe: `the keys of ssh-agent (${agent})` };
  const privateKey = await readFile(fallback);
  // An encrypted default key without a passphrase is skipped when an agent can sign instead.
  if (agent) {
    const { utils } = await loadSsh2();
    if (utils.parseKey(privateKey, passphrase) instanceof Error)
      return { agent, describe: `the keys of ssh-agent (${agent})` };
  }
  await checkKey(privateKey, fallback, passphrase);
  return { privateKey, passphrase, agent, describe: agent ? `key ${fallback} and ssh-agent` : `key ${fallback}` };
}

async function checkKey(privateKey: Buffer, file: string, passphrase: string | undefined): Promise<void> {
  const { utils } = await loadSsh2();
  const parsed = utils.parseKey(privateKey, passphrase);
  if (!(parsed instanceof Error)) return;
  const encrypted = /encrypted|passphrase/i.test(parsed.message);
  throw new InvalidInputError(
    encrypted
      ? `the SSH key ${file} is encrypted: set RUNNER_SSH_KEY_PASSPHRASE, or load it into ssh-agent and leave out --ssh-key`
      : `${file} is not a private key ssh2 can read: ${parsed.message}`,
    { field: 'ssh-key' },
  );
}

function hostKeyError(verdict: HostKeyVerdict, label: string, key: Buffer, target: SshTarget): RunnerError {
  const offered = `${keyTypeOf(key)} key ${fingerprint(key)}`;
  if (verdict.kind === 'revoked') {
    return new RunnerError(
      'host_key_revoked',
      `the host key of ${label} (${offered}) is marked @revoked in ${verdict.entry.file}:${verdict.entry.line}; refusing to connect`,
      { status: 403 },
    );
  }
  if (verdict.kind === 'changed') {
    const known = verdict.entries.map((e) => `${e.keyType} ${fingerprint(e.key)} at ${e.file}:${e.line}`).join('; ');
    return new RunnerError(
      'host_key_mismatch',
      `HOST KEY MISMATCH for ${label}: it offered ${offered}, but known_hosts holds a different key for it (${known}). ` +
        `Someone may be intercepting the connection (man in the middle), or the host was reinstalled. Refusing to connect; ` +
        `--accept-new-host-key does not override this. If the change is expected, remove the old entry ` +
        `(ssh-keygen -R '${label}' -f ${verdict.entries[0].file}) and connect again with --accept-new-host-key`,
      { status: 403 },
    );
  }
  return new RunnerError(
    'host_key_unknown',
    `the host key of ${label} is not known: it offered ${offered}, which is not in ${target.knownHostsFile}` +
      `${existsSync(GLOBAL_KNOWN_HOSTS) ? ` or ${GLOBAL_KNOWN_HOSTS}` : ''}. Compare it with the host's own ` +
      `(ssh-keygen -lf /etc/ssh/ssh_host_${keyTypeOf(key).replace(/^ssh-|-sha2-nistp\d+$/g, '')}_key.pub on the host), ` +
      `then run again with --accept-new-host-key to trust and record it`,
    { status: 403 },
  );
}

function connectError(
  error: Error & { level?: string; code?: string },
  target: SshTarget,
  offered: string,
): RunnerError {
  const where = `${target.user}@${hostLabel(target.host, target.port)}`;
  if (error.level === 'client-authentication') {
    return new RunnerError(
      'ssh_auth_failed',
      `SSH authentication as ${target.user} on ${hostLabel(target.host, target.port)} failed with ${offered}: is its public key in ~${target.user}/.ssh/authorized_keys?`,
      { status: 403, cause: error },
    );
  }
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused (is sshd running there, on that port?)',
    ENOTFOUND: 'no such host',
    EHOSTUNREACH: 'host unreachable',
    ETIMEDOUT: 'timed out',
  };
  const reason = (error.code && reasons[error.code]) ?? error.message;
  return new RunnerError('ssh_unreachable', `cannot connect to ${where} over SSH: ${reason}`, {
    status: 502,
    cause: error,
  });
}
