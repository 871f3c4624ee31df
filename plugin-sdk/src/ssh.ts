import type { Readable } from 'node:stream';
import { createServiceRef } from './service-ref.js';

/**
 * The one SSH client of runner (issue 22), provided by the ssh-profiles plugin. Other plugins (the
 * terminal, gitops later) reach hosts through it by ref and never load ssh2 themselves.
 *
 * Two levels: `SshClientRef` connects to any endpoint with a host key policy the caller decides
 * (a callback); `SshProfilesRef` connects by a stored profile, with the profile's pinned key,
 * credentials (from the secrets service) and audit log.
 */

/** What a host presented during the handshake. */
export interface SshHostKey {
  /** `ssh-ed25519`, `ssh-rsa`, ... */
  type: string;
  /** `SHA256:...` as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** The public key blob, base64 (what a known_hosts line holds). */
  key: string;
}

/** The credentials offered, one of them. Values are plaintext in memory only for the connection. */
export type SshAuth = { privateKey: string | Buffer; passphrase?: string } | { password: string };

export interface SshEndpoint {
  host: string;
  port: number;
  user: string;
  auth: SshAuth;
  /**
   * Decides on the host key before any credential is sent: resolve to accept, throw (a RunnerError
   * naming the fingerprints) to refuse. Called once per connection, during the handshake.
   */
  verifyHostKey(key: SshHostKey): void | Promise<void>;
  /** Handshake deadline; default 20 s. */
  readyTimeoutMs?: number;
}

export interface SshExecOptions {
  /** Streamed as it arrives (a chunk may end mid-line). */
  onStdout?(chunk: Buffer): void;
  onStderr?(chunk: Buffer): void;
  /**
   * Written to the command's stdin, which is then closed. A stream is piped as it is read (an
   * upload too large to hold in memory, the agent installer's archive); its error fails the call.
   */
  stdin?: string | Buffer | Readable;
  /** Default 10 minutes; past it the channel is closed and the call fails with `ssh_timeout`. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface SshExecResult {
  /** null when a signal ended the command. */
  code: number | null;
  signal?: string;
  /** The whole output, also when streamed; each capped at 1 MiB (the rest is dropped, `truncated` says so). */
  stdout: string;
  stderr: string;
  truncated?: boolean;
}

/** A PTY shell on the remote host (`shell` below). */
export interface SshShell {
  write(data: string | Buffer): void;
  resize(rows: number, cols: number): void;
  onData(listener: (chunk: Buffer) => void): void;
  /** Once, when the shell ends (its exit code when known) or the connection drops. */
  onExit(listener: (code: number | null) => void): void;
  close(): void;
}

/** An open connection. `close` it when done; a dropped connection fails the calls under way. */
export interface SshConnection {
  readonly hostKey: SshHostKey;
  /** Runs `command` through the remote user's login shell. */
  exec(command: string, options?: SshExecOptions): Promise<SshExecResult>;
  /** Copies a local file to `remotePath` over SFTP (mode 0600 unless `mode`); answers the bytes sent. */
  upload(localPath: string, remotePath: string, options?: { mode?: number }): Promise<{ bytes: number }>;
  /** Writes bytes to `remotePath` over SFTP (the terminal's upload). */
  uploadBytes(data: Buffer, remotePath: string, options?: { mode?: number }): Promise<{ bytes: number }>;
  /** Copies `remotePath` to a local file over SFTP; answers the bytes received. */
  download(remotePath: string, localPath: string): Promise<{ bytes: number }>;
  /** Reads a remote file into memory, refusing one larger than `maxBytes` (the terminal's download). */
  downloadBytes(remotePath: string, maxBytes: number): Promise<Buffer>;
  shell(options: { rows: number; cols: number; term?: string }): Promise<SshShell>;
  /** Hears the connection ending (closed here, or dropped). */
  onClose(listener: () => void): void;
  close(): void;
}

export interface SshClient {
  /** Connects and authenticates; fails with `ssh_unreachable`, `ssh_auth_failed` or the verifier's error. */
  connect(endpoint: SshEndpoint): Promise<SshConnection>;
}

export const SshClientRef = createServiceRef<SshClient>({
  id: 'ssh.client',
  description: 'the shared SSH client (ssh2): connect with a host key policy, exec, SFTP, PTY shells',
});

/** A stored SSH profile as the API shows it: never a password or key, only how it authenticates. */
export interface SshProfile {
  name: string;
  host: string;
  port: number;
  user: string;
  /** `key` with `key_path` (a file on the master) or a key stored in the secrets service; or `password`. */
  auth_type: 'key' | 'password';
  /** Set when the key is a file on the master; absent when it is stored as a secret. */
  key_path?: string;
  /** True when a password or a key is stored in the secrets service (scope `ssh-profile:<name>`). */
  has_secret: boolean;
  /** The pinned host key, absent until the first connection made with `trust_host_key`. */
  host_key?: { type: string; fingerprint: string };
  description: string;
  /** Whether workflows may use it (the Lua `ssh` module): off unless an admin turns it on. */
  workflows: boolean;
  last_used_at?: string;
  connection_count: number;
  created_at: string;
  updated_at: string;
}

/** One row of a profile's audit log. */
export interface SshAuditEntry {
  id: number;
  profile: string;
  at: string;
  /** Who acted: a user name, `workflow:<name>/<run id>`, `terminal:<user>`, `agent-install:<agent>/<user>`. */
  actor: string;
  action:
    | 'connection_established'
    | 'connection_failed'
    | 'key_lent'
    | 'command_executed'
    | 'file_uploaded'
    | 'file_downloaded'
    | 'connection_closed';
  /** The command (its first 500 characters), the remote path, or why a connection failed. */
  detail: string;
  /** A command's exit code; a transfer's bytes. */
  result?: number | null;
}

/** What an OpenSSH client needs to reach a profile's host as `connect` would (SshProfiles.lendKey). */
export interface SshKeyLoan {
  user: string;
  host: string;
  port: number;
  /** The private key's text (OpenSSH or PEM), for a 0600 file that lives while the client runs. */
  privateKey: string;
  /** The pinned host key as a known_hosts line (`[host]:port type key`; `host type key` on port 22). */
  knownHostsLine: string;
}

export interface SshProfiles {
  get(name: string): Promise<SshProfile>;
  /**
   * The profile's key and pinned host key for an OpenSSH client on this master (GitOps runs git
   * over SSH with them). Only for a `key` profile whose host key is pinned: a password cannot be
   * given to a client without a prompt, and an unpinned key would be trusted blindly. The key is
   * registered with the redactor and the loan written to the profile's audit log (`key_lent`)
   * under `actor`; the caller keeps the key in a private file only while its client runs.
   */
  lendKey(name: string, options: { actor: string }): Promise<SshKeyLoan>;
  /**
   * Connects by profile: the host key must equal the pinned one (a changed key is refused with
   * both fingerprints, `host_key_mismatch`); with no pinned key the connection is refused
   * (`host_key_unknown`) unless `trustHostKey`, which pins it. Every connection, command, transfer
   * and close is written to the profile's audit log under `actor`.
   */
  connect(name: string, options: { actor: string; trustHostKey?: boolean }): Promise<SshConnection>;
}

export const SshProfilesRef = createServiceRef<SshProfiles>({
  id: 'ssh.profiles',
  description: 'stored SSH profiles: connect by name with a pinned host key and an audit log',
});
