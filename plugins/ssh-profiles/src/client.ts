import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  RunnerError,
  type SshClient,
  type SshConnection,
  type SshEndpoint,
  type SshExecOptions,
  type SshExecResult,
  type SshHostKey,
  type SshShell,
} from '@runner/plugin-sdk';
import type { Client, ClientChannel, ConnectConfig, SFTPWrapper } from 'ssh2';

type Ssh2 = typeof import('ssh2');

/** ssh2 is CommonJS: Node's ESM import sees some of its names only on `default`. */
async function loadSsh2(): Promise<Ssh2> {
  const module = (await import('ssh2')) as Ssh2 & { default?: Ssh2 };
  return module.default ?? module;
}

/** Output kept of one command (each stream); more is streamed to the listener but not kept. */
const MAX_KEPT_OUTPUT = 1024 * 1024;
const DEFAULT_EXEC_TIMEOUT_MS = 10 * 60_000;

/** `SHA256:...` as `ssh-keygen -l` prints it. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, ...). */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const length = key.readUInt32BE(0);
  return length > 0 && length < 64 && key.length >= 4 + length
    ? key.subarray(4, 4 + length).toString('latin1')
    : 'unknown';
}

export function hostKeyOf(key: Buffer): SshHostKey {
  return { type: keyTypeOf(key), fingerprint: fingerprintOf(key), key: key.toString('base64') };
}

const where = (endpoint: Pick<SshEndpoint, 'user' | 'host' | 'port'>) =>
  `${endpoint.user}@${endpoint.host}:${endpoint.port}`;

/** The shared client: ssh2 behind the SDK's SshClient contract. */
export class Ssh2Client implements SshClient {
  async connect(endpoint: SshEndpoint): Promise<SshConnection> {
    const { Client } = await loadSsh2();
    const client = new Client();
    let presented: SshHostKey | undefined;
    let refusal: Error | undefined;
    const config: ConnectConfig = {
      host: endpoint.host,
      port: endpoint.port,
      username: endpoint.user,
      ...('password' in endpoint.auth
        ? { password: endpoint.auth.password }
        : { privateKey: endpoint.auth.privateKey, passphrase: endpoint.auth.passphrase }),
      readyTimeout: endpoint.readyTimeoutMs ?? 20_000,
      keepaliveInterval: 15_000,
      // Not an async function: ssh2 takes any returned value as the verdict.
      hostVerifier: (key: Buffer, verify: (valid: boolean) => void) => {
        presented = hostKeyOf(key);
        Promise.resolve()
          .then(() => endpoint.verifyHostKey(presented as SshHostKey))
          .then(
            () => verify(true),
            (error: Error) => {
              refusal = error;
              verify(false);
            },
          );
      },
    };
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', (error: Error & { level?: string; code?: string }) => {
        client.end();
        reject(refusal ?? connectError(error, endpoint));
      });
      client.connect(config);
    });
    return new Ssh2Connection(client, endpoint, presented as SshHostKey);
  }
}

function connectError(error: Error & { level?: string; code?: string }, endpoint: SshEndpoint): RunnerError {
  if (error.level === 'client-authentication') {
    const offered = 'password' in endpoint.auth ? 'a password' : 'a private key';
    return new RunnerError(
      'ssh_auth_failed',
      `SSH authentication as ${endpoint.user} on ${endpoint.host}:${endpoint.port} failed with ${offered}`,
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
  return new RunnerError('ssh_unreachable', `cannot connect to ${where(endpoint)} over SSH: ${reason}`, {
    status: 502,
    cause: error,
  });
}

class Ssh2Connection implements SshConnection {
  private sftpSession: Promise<SFTPWrapper> | undefined;
  private readonly closeListeners: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly endpoint: SshEndpoint,
    readonly hostKey: SshHostKey,
  ) {
    client.on('error', () => {});
    client.once('close', () => {
      this.closed = true;
      for (const listener of this.closeListeners.splice(0)) listener();
    });
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  close(): void {
    this.client.end();
  }

  private failure(what: string, error: Error): RunnerError {
    return new RunnerError('ssh_failed', `${what} on ${where(this.endpoint)} failed: ${error.message}`, {
      status: 502,
      cause: error,
    });
  }

  exec(command: string, options: SshExecOptions = {}): Promise<SshExecResult> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      this.client.exec(command, (error, channel) => {
        if (error) return reject(this.failure('starting a command', error));
        const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: 0, truncated: false };
        const keep = (into: Buffer[], chunk: Buffer) => {
          const room = MAX_KEPT_OUTPUT * 2 - kept.bytes;
          if (room <= 0) kept.truncated = true;
          else into.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          kept.bytes += Math.min(chunk.length, Math.max(room, 0));
        };
        let code: number | null = null;
        let signal: string | undefined;
        const stop = () => channel.close();
        const timer = setTimeout(() => {
          channel.close();
          reject(
            new RunnerError(
              'ssh_timeout',
              `a command on ${where(this.endpoint)} did not finish within ${timeoutMs / 1000} s`,
              {
                status: 504,
              },
            ),
          );
        }, timeoutMs);
        options.signal?.addEventListener('abort', stop, { once: true });
        channel.on('data', (chunk: Buffer) => {
          keep(kept.stdout, chunk);
          options.onStdout?.(chunk);
        });
        channel.stderr.on('data', (chunk: Buffer) => {
          keep(kept.stderr, chunk);
          options.onStderr?.(chunk);
        });
        channel.on('exit', (exitCode: number | null, exitSignal?: string) => {
          code = exitCode;
          signal = exitSignal ?? undefined;
        });
        let inputError: Error | undefined;
        channel.once('close', () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', stop);
          if (options.signal?.aborted) return reject(options.signal.reason as Error);
          if (inputError) return reject(this.failure('reading the input of a command', inputError));
          resolve({
            code,
            ...(signal ? { signal } : {}),
            stdout: Buffer.concat(kept.stdout).toString('utf8'),
            stderr: Buffer.concat(kept.stderr).toString('utf8'),
            ...(kept.truncated ? { truncated: true } : {}),
          });
        });
        feedStdin(channel, options.stdin, (error) => (inputError = error));
      });
    });
  }

  private sftp(): Promise<SFTPWrapper> {
    this.sftpSession ??= new Promise((resolve, reject) =>
      this.client.sftp((error, sftp) => (error ? reject(this.failure('opening SFTP', error)) : resolve(sftp))),
    );
    return this.sftpSession;
  }

  async upload(localPath: string, remotePath: string, options: { mode?: number } = {}): Promise<{ bytes: number }> {
    const sftp = await this.sftp();
    let bytes = 0;
    const source = createReadStream(localPath);
    source.on('data', (chunk) => (bytes += chunk.length));
    try {
      await pipeline(source, sftp.createWriteStream(remotePath, { mode: options.mode ?? 0o600 }));
    } catch (error) {
      throw this.failure(`uploading to ${remotePath}`, error as Error);
    }
    return { bytes };
  }

  async uploadBytes(data: Buffer, remotePath: string, options: { mode?: number } = {}): Promise<{ bytes: number }> {
    const sftp = await this.sftp();
    await new Promise<void>((resolve, reject) =>
      sftp.writeFile(remotePath, data, { mode: options.mode ?? 0o600 }, (error) =>
        error ? reject(this.failure(`uploading to ${remotePath}`, error)) : resolve(),
      ),
    );
    return { bytes: data.length };
  }

  async download(remotePath: string, localPath: string): Promise<{ bytes: number }> {
    const sftp = await this.sftp();
    let bytes = 0;
    const source = sftp.createReadStream(remotePath);
    source.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(source, createWriteStream(localPath, { mode: 0o600 }));
    } catch (error) {
      throw this.failure(`downloading ${remotePath}`, error as Error);
    }
    return { bytes };
  }

  async downloadBytes(remotePath: string, maxBytes: number): Promise<Buffer> {
    const sftp = await this.sftp();
    const size = await new Promise<number>((resolve, reject) =>
      sftp.stat(remotePath, (error, stats) =>
        error ? reject(this.failure(`reading ${remotePath}`, error)) : resolve(stats.size),
      ),
    );
    if (size > maxBytes)
      throw new RunnerError('too_large', `${remotePath} is ${size} bytes; at most ${maxBytes} are downloaded here`, {
        status: 413,
      });
    return new Promise((resolve, reject) =>
      sftp.readFile(remotePath, (error, data) =>
        error ? reject(this.failure(`downloading ${remotePath}`, error)) : resolve(data),
      ),
    );
  }

  shell(options: { rows: number; cols: number; term?: string }): Promise<SshShell> {
    return new Promise((resolve, reject) => {
      this.client.shell(
        { rows: options.rows, cols: options.cols, term: options.term ?? 'xterm-256color' },
        (error, channel) => (error ? reject(this.failure('opening a shell', error)) : resolve(shellOf(channel))),
      );
    });
  }
}

/** Writes `input` to the command's stdin and closes it; a stream's read error closes the channel and goes to `failed`. */
function feedStdin(channel: ClientChannel, input: SshExecOptions['stdin'], failed: (error: Error) => void): void {
  if (!(input instanceof Readable)) return void channel.end(input ?? '');
  input.once('error', (error) => {
    failed(error);
    channel.close();
  });
  input.pipe(channel);
}

function shellOf(channel: ClientChannel): SshShell {
  let code: number | null = null;
  const exits: ((code: number | null) => void)[] = [];
  channel.on('exit', (exitCode: number | null) => (code = exitCode));
  channel.once('close', () => {
    for (const listener of exits.splice(0)) listener(code);
  });
  return {
    write: (data) => void channel.write(data),
    resize: (rows, cols) => void channel.setWindow(rows, cols, 0, 0),
    onData: (listener) => {
      channel.on('data', listener);
      channel.stderr.on('data', listener);
    },
    onExit: (listener) => void exits.push(listener),
    close: () => void channel.close(),
  };
}
