import { readFile } from 'node:fs/promises';
import {
  InvalidInputError,
  RunnerError,
  type Redactor,
  type SecretsService,
  type SshAuth,
  type SshClient,
  type SshConnection,
  type SshHostKey,
  type SshKeyLoan,
  type SshProfile,
  type SshProfiles,
} from '@runner/plugin-sdk';
import { publicProfile, type ProfileFields, type ProfileStore, type StoredProfile } from './profile-store.js';

/** The scope the profile's credential is kept under in the secrets service. */
export const secretScope = (profile: string) => `ssh-profile:${profile}`;
const PASSWORD = 'password';
const PRIVATE_KEY = 'private_key';

/** What a create or update request may carry besides the stored fields: a credential to keep sealed. */
export interface ProfileInput {
  host: string;
  port?: number;
  user: string;
  auth_type: 'key' | 'password';
  key_path?: string;
  /** A private key to store in the secrets service (instead of key_path). */
  private_key?: string;
  password?: string;
  description?: string;
  /** Whether workflows may use the profile (the Lua `ssh` module); default false. */
  workflows?: boolean;
}

/**
 * Profiles over the shared client: credentials from a key file or the secrets service, the host
 * key pinned on an explicit trust and compared on every later connection, each action audited.
 */
export class SshProfilesService implements SshProfiles {
  constructor(
    private readonly profiles: ProfileStore,
    private readonly client: SshClient,
    private readonly secrets: SecretsService | undefined,
    private readonly redactor?: Redactor,
  ) {}

  async get(name: string): Promise<SshProfile> {
    return publicProfile(await this.profiles.require(name));
  }

  async list(): Promise<SshProfile[]> {
    return (await this.profiles.list()).map(publicProfile);
  }

  async create(name: string, input: ProfileInput, actor: string): Promise<SshProfile> {
    const fields = this.fieldsOf(input);
    const created = await this.profiles.create(name, fields);
    await this.storeCredential(name, input, actor);
    return publicProfile(created);
  }

  /** Replaces the profile's fields; a credential not given again is kept when the auth type stays. */
  async update(name: string, input: ProfileInput, actor: string): Promise<SshProfile> {
    const before = await this.profiles.require(name);
    const keepsSecret =
      before.has_secret &&
      before.auth_type === input.auth_type &&
      !input.key_path &&
      !input.password &&
      !input.private_key;
    const fields = this.fieldsOf(input, keepsSecret);
    const updated = await this.profiles.update(name, fields);
    if (!keepsSecret && before.has_secret && !fields.has_secret)
      await this.secrets?.remove(secretScope(name), before.auth_type === 'password' ? PASSWORD : PRIVATE_KEY);
    await this.storeCredential(name, input, actor);
    return publicProfile(updated);
  }

  async remove(name: string): Promise<void> {
    const profile = await this.profiles.require(name);
    await this.profiles.remove(name);
    if (profile.has_secret && this.secrets) {
      await this.secrets.remove(secretScope(name), PASSWORD);
      await this.secrets.remove(secretScope(name), PRIVATE_KEY);
    }
  }

  private fieldsOf(input: ProfileInput, keepsSecret = false): ProfileFields {
    const port = input.port ?? 22;
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new InvalidInputError(`port ${port} is not a TCP port (1-65535)`, { field: 'port' });
    if (input.auth_type === 'password' && !input.password && !keepsSecret)
      throw new InvalidInputError('auth_type password needs a password', { field: 'password' });
    if (input.auth_type === 'key' && !input.key_path && !input.private_key && !keepsSecret)
      throw new InvalidInputError(
        'auth_type key needs key_path (a file on the master) or private_key (stored encrypted)',
        {
          field: 'key_path',
        },
      );
    if (input.auth_type === 'key' && input.key_path && input.private_key)
      throw new InvalidInputError('give key_path or private_key, not both', { field: 'private_key' });
    if (input.auth_type === 'key' && input.password)
      throw new InvalidInputError('a password belongs to auth_type password', { field: 'password' });
    const sealed = Boolean(input.password || input.private_key) || keepsSecret;
    if (sealed && !this.secrets)
      throw new RunnerError(
        'secrets_unavailable',
        'storing a password or a key needs the secrets plugin, which is not loaded here; use key_path instead',
        { status: 503 },
      );
    return {
      host: input.host,
      port,
      user: input.user,
      auth_type: input.auth_type,
      key_path: input.auth_type === 'key' ? (input.key_path ?? null) : null,
      has_secret: sealed,
      description: input.description ?? '',
      workflows: input.workflows === true,
    };
  }

  private async storeCredential(name: string, input: ProfileInput, actor: string): Promise<void> {
    if (input.password) await this.secrets?.put(secretScope(name), PASSWORD, input.password, actor);
    if (input.private_key) await this.secrets?.put(secretScope(name), PRIVATE_KEY, input.private_key, actor);
  }

  private async credentials(profile: StoredProfile): Promise<SshAuth> {
    const passphrase = process.env.RUNNER_SSH_KEY_PASSPHRASE || undefined;
    if (profile.auth_type === 'key' && profile.key_path) {
      try {
        return { privateKey: await readFile(profile.key_path), passphrase };
      } catch (error) {
        throw new InvalidInputError(
          `SSH profile ${profile.name}: cannot read its key ${profile.key_path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
    }
    if (!this.secrets)
      throw new RunnerError(
        'secrets_unavailable',
        `SSH profile ${profile.name} keeps its credential in the secrets plugin, which is not loaded here`,
        {
          status: 503,
        },
      );
    const value = await this.secrets.reveal(
      secretScope(profile.name),
      profile.auth_type === 'password' ? PASSWORD : PRIVATE_KEY,
    );
    // The credential never appears in a log line, an answer or a run's output (kept registered:
    // an error message of a later connection could quote it).
    this.redactor?.addSecret(value);
    return profile.auth_type === 'password' ? { password: value } : { privateKey: value, passphrase };
  }

  async lendKey(name: string, options: { actor: string }): Promise<SshKeyLoan> {
    const profile = await this.profiles.require(name);
    if (profile.auth_type !== 'key')
      throw new InvalidInputError(
        `SSH profile ${name} signs in with a password, which an SSH client cannot be given without a prompt: use a key profile`,
        { field: 'auth_type' },
      );
    if (!profile.host_key_blob || !profile.host_key)
      throw new RunnerError(
        'host_key_unknown',
        `SSH profile ${name} has no pinned host key to check ${profile.host}:${profile.port} against: pin it first (runner ssh test ${name} --trust-host-key)`,
        { status: 403 },
      );
    const auth = (await this.credentials(profile)) as { privateKey: string | Buffer };
    const privateKey = auth.privateKey.toString();
    this.redactor?.addSecret(privateKey);
    const hostName = profile.port === 22 ? profile.host : `[${profile.host}]:${profile.port}`;
    await this.profiles.audit({
      profile: name,
      actor: options.actor,
      action: 'key_lent',
      detail: `key and pinned host key ${profile.host_key.fingerprint} for an SSH client of the master`,
    });
    return {
      user: profile.user,
      host: profile.host,
      port: profile.port,
      privateKey,
      knownHostsLine: `${hostName} ${profile.host_key.type} ${profile.host_key_blob}`,
    };
  }

  async connect(name: string, options: { actor: string; trustHostKey?: boolean }): Promise<SshConnection> {
    const profile = await this.profiles.require(name);
    const auth = await this.credentials(profile);
    let pinned: SshHostKey | undefined;
    let connection: SshConnection;
    try {
      connection = await this.client.connect({
        host: profile.host,
        port: profile.port,
        user: profile.user,
        auth,
        verifyHostKey: (key) => {
          checkHostKey(profile, key, options.trustHostKey === true);
          if (!profile.host_key_blob) pinned = key;
        },
      });
    } catch (error) {
      await this.profiles.audit({
        profile: name,
        actor: options.actor,
        action: 'connection_failed',
        detail: (error as Error).message,
      });
      throw error;
    }
    if (pinned) await this.profiles.pinHostKey(name, pinned);
    await this.profiles.countConnection(name);
    await this.profiles.audit({
      profile: name,
      actor: options.actor,
      action: 'connection_established',
      detail: `${profile.user}@${profile.host}:${profile.port} ${connection.hostKey.type} ${connection.hostKey.fingerprint}${pinned ? ' (pinned now)' : ''}`,
    });
    return audited(connection, name, options.actor, this.profiles);
  }
}

/** The profile's pinned key must be the one offered; none pinned passes only with an explicit trust. */
function checkHostKey(profile: StoredProfile, key: SshHostKey, trust: boolean): void {
  const label = `${profile.host}:${profile.port}`;
  if (profile.host_key_blob) {
    if (profile.host_key_blob === key.key) return;
    throw new RunnerError(
      'host_key_mismatch',
      `HOST KEY MISMATCH for SSH profile ${profile.name} (${label}): it offered ${key.type} ${key.fingerprint}, but the profile ` +
        `pinned ${profile.host_key?.type} ${profile.host_key?.fingerprint}. Someone may be intercepting the connection, or the ` +
        `host was reinstalled. Refusing to connect; if the change is expected, unpin the key (runner ssh update ${profile.name} ` +
        `--unpin-host-key) and connect again with --trust-host-key`,
      { status: 403, details: { offered: key.fingerprint, pinned: profile.host_key?.fingerprint } },
    );
  }
  if (trust) return;
  throw new RunnerError(
    'host_key_unknown',
    `SSH profile ${profile.name} has no pinned host key: ${label} offered ${key.type} ${key.fingerprint}. Compare it with the ` +
      `host's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub there), then test with --trust-host-key to pin it`,
    { status: 403, details: { offered: key.fingerprint } },
  );
}

/** The connection with every action written to the profile's audit log (after it happened, with its result). */
function audited(connection: SshConnection, profile: string, actor: string, store: ProfileStore): SshConnection {
  const audit = (action: Parameters<ProfileStore['audit']>[0]['action'], detail: string, result?: number | null) =>
    store.audit({ profile, actor, action, detail, result });
  let closedLogged = false;
  connection.onClose(() => {
    if (closedLogged) return;
    closedLogged = true;
    void audit('connection_closed', '').catch(() => {});
  });
  return {
    hostKey: connection.hostKey,
    onClose: (listener) => connection.onClose(listener),
    close: () => connection.close(),
    async exec(command, options) {
      const result = await connection.exec(command, options);
      await audit('command_executed', command, result.code);
      return result;
    },
    async upload(localPath, remotePath, options) {
      const result = await connection.upload(localPath, remotePath, options);
      await audit('file_uploaded', `${localPath} -> ${remotePath}`, result.bytes);
      return result;
    },
    async uploadBytes(data, remotePath, options) {
      const result = await connection.uploadBytes(data, remotePath, options);
      await audit('file_uploaded', remotePath, result.bytes);
      return result;
    },
    async download(remotePath, localPath) {
      const result = await connection.download(remotePath, localPath);
      await audit('file_downloaded', `${remotePath} -> ${localPath}`, result.bytes);
      return result;
    },
    async downloadBytes(remotePath, maxBytes) {
      const data = await connection.downloadBytes(remotePath, maxBytes);
      await audit('file_downloaded', remotePath, data.length);
      return data;
    },
    async shell(options) {
      const shell = await connection.shell(options);
      await audit('command_executed', `interactive shell (${options.cols}x${options.rows})`);
      return shell;
    },
  };
}
