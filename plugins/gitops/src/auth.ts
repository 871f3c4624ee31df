import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError, type SecretsService, type SshProfiles } from '@runner/plugin-sdk';
import type { GitEnv } from './git.js';

/** How the master authenticates to the repository (the gitops.* credential keys). */
export interface GitCredentials {
  /** A private key file on the master's host. */
  sshKeyFile: string;
  /** Or a private key kept by the secrets plugin: `scope/name`. */
  sshKeySecret: string;
  /** A password or token for HTTPS kept by the secrets plugin: `scope/name`. */
  passwordSecret: string;
  /** The HTTPS user name the password goes with. */
  username: string;
  /** The known_hosts file SSH checks the server's key against. */
  knownHosts: string;
  /** Record an unknown host key on first contact instead of refusing it. */
  acceptNewHostKey: boolean;
  /**
   * Or an SSH profile (ssh-profiles plugin) whose key and pinned host key git uses: the
   * repository's host must be the profile's. Takes the place of the key and known_hosts above.
   */
  sshProfile: string;
}

/** What the session reads credentials from: the secrets plugin and the SSH profiles, when loaded. */
export interface CredentialSources {
  secrets?: SecretsService;
  profiles?: SshProfiles;
}

/** The environment of one round of git commands, and the removal of its credential files. */
export interface GitSession {
  env: GitEnv;
  close(): void;
}

/** `scope/name` of a secret (the scope may hold `:`, the name no `/`). */
export function secretRef(value: string, key: string): { scope: string; name: string } {
  const cut = value.lastIndexOf('/');
  if (cut <= 0 || cut === value.length - 1)
    throw new InvalidInputError(`${key}: "${value}" is not a secret reference: use scope/name`, { field: key });
  return { scope: value.slice(0, cut), name: value.slice(cut + 1) };
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * Credentials for git, passed as files in a private temporary directory (mode 0700, removed by
 * `close`) that GIT_SSH_COMMAND and GIT_ASKPASS name: never in an argument, an environment value
 * or a log line. Secrets are revealed here, on the master, and nowhere else.
 */
export async function openGitSession(
  credentials: GitCredentials,
  { secrets, profiles }: CredentialSources,
  url = '',
): Promise<GitSession> {
  const dir = mkdtempSync(join(tmpdir(), 'runner-gitops-'));
  const close = () => rmSync(dir, { recursive: true, force: true });
  try {
    const reveal = async (value: string, key: string) => {
      if (!secrets)
        throw new InvalidInputError(`${key}: no secrets plugin runs on this master to read ${value} from`, {
          field: key,
        });
      const { scope, name } = secretRef(value, key);
      return secrets.reveal(scope, name);
    };
    const env: GitEnv = {};
    let key = credentials.sshKeyFile;
    let knownHosts = credentials.knownHosts;
    if (credentials.sshProfile) {
      ({ key, knownHosts } = await lendProfileKey(credentials.sshProfile, profiles, url, dir));
    } else if (credentials.sshKeySecret) {
      key = join(dir, 'key');
      const text = await reveal(credentials.sshKeySecret, 'gitops.ssh_key_secret');
      writeFileSync(key, text.endsWith('\n') ? text : `${text}\n`, { mode: 0o600 });
    }
    env.GIT_SSH_COMMAND = [
      'ssh -F /dev/null -o BatchMode=yes',
      key ? `-o IdentitiesOnly=yes -i ${quote(key)}` : '',
      `-o UserKnownHostsFile=${quote(knownHosts)}`,
      // A profile's host key is pinned: never a new one, whatever gitops.accept_new_host_key says.
      `-o StrictHostKeyChecking=${credentials.acceptNewHostKey && !credentials.sshProfile ? 'accept-new' : 'yes'}`,
    ]
      .filter(Boolean)
      .join(' ');
    if (credentials.passwordSecret) {
      const password = await reveal(credentials.passwordSecret, 'gitops.password_secret');
      writeFileSync(join(dir, 'password'), password, { mode: 0o600 });
      writeFileSync(join(dir, 'username'), credentials.username, { mode: 0o600 });
      const askpass = join(dir, 'askpass');
      // git asks "Username for ..." then "Password for ...": the helper answers from the files.
      writeFileSync(
        askpass,
        `#!/bin/sh\ncase "$1" in\n  Username*) cat ${quote(join(dir, 'username'))} ;;\n  *) cat ${quote(join(dir, 'password'))} ;;\nesac\n`,
        { mode: 0o700 },
      );
      env.GIT_ASKPASS = askpass;
    }
    return { env, close };
  } catch (error) {
    close();
    throw error;
  }
}

/** The host a git SSH URL names (`ssh://user@host:port/path` or `user@host:path`), lower case. */
export function sshHostOf(url: string): string | undefined {
  const full = /^ssh:\/\/(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+)/.exec(url);
  const scp = /^(?:[^@/:]+@)?([^:/]+):(?!\/\/)/.exec(url);
  return (full?.[1] ?? scp?.[1])?.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * The profile's key and pinned host key, as files in the session's directory. The repository must
 * be on the profile's host: a profile pins one host's key, and lending it for another would make
 * that pin meaningless.
 */
async function lendProfileKey(
  profile: string,
  profiles: SshProfiles | undefined,
  url: string,
  dir: string,
): Promise<{ key: string; knownHosts: string }> {
  if (!profiles)
    throw new InvalidInputError(
      `gitops.ssh_profile: no SSH profiles plugin runs on this master to read profile ${profile} from`,
      { field: 'gitops.ssh_profile' },
    );
  const loan = await profiles.lendKey(profile, { actor: 'gitops' });
  const host = sshHostOf(url);
  if (host !== loan.host.toLowerCase())
    throw new InvalidInputError(
      `gitops.ssh_profile: profile ${profile} is for ${loan.host}, but gitops.url ${host ? `names ${host}` : 'is not an SSH URL'}`,
      { field: 'gitops.ssh_profile' },
    );
  const key = join(dir, 'key');
  writeFileSync(key, loan.privateKey.endsWith('\n') ? loan.privateKey : `${loan.privateKey}\n`, { mode: 0o600 });
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, `${loan.knownHostsLine}\n`, { mode: 0o600 });
  return { key, knownHosts };
}
