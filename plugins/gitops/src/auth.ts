import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError, type SecretsService } from '@runner/plugin-sdk';
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
  secrets: SecretsService | undefined,
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
    if (credentials.sshKeySecret) {
      key = join(dir, 'key');
      const text = await reveal(credentials.sshKeySecret, 'gitops.ssh_key_secret');
      writeFileSync(key, text.endsWith('\n') ? text : `${text}\n`, { mode: 0o600 });
    }
    env.GIT_SSH_COMMAND = [
      'ssh -F /dev/null -o BatchMode=yes',
      key ? `-o IdentitiesOnly=yes -i ${quote(key)}` : '',
      `-o UserKnownHostsFile=${quote(credentials.knownHosts)}`,
      `-o StrictHostKeyChecking=${credentials.acceptNewHostKey ? 'accept-new' : 'yes'}`,
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
