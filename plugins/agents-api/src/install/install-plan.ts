// What `runner agent install` / `update` will do, read from the command line before anything
// happens on the remote host: the plan, the agent's environment, the master's certificate.
import { readFileSync } from 'node:fs';
import { AGENT_NAME_PATTERN, InvalidInputError, type CommandContext, type CommandInput } from '@runner/plugin-sdk';
import { readLocalRecord, type LocalInstallRecord } from './local-record.js';
import { SAFE_PATH } from './remote.js';
import { defaultKnownHostsFile, type SshTarget } from './ssh.js';

const DEFAULT_WAIT_SECONDS = 60;

/** `host:port` of the master's gRPC endpoint; IPv6 hosts in brackets. */
export function parseMasterAddress(value: string): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65535) {
    throw new InvalidInputError(`--master: "${value}" is not host:port (e.g. master.example:50053)`, {
      field: 'master',
    });
  }
  return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port };
}

function need(value: unknown, flag: string, why: string): string {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  throw new InvalidInputError(`${flag} is required${why}`, { field: flag.replace(/^--/, '') });
}

/** What the steps on the agent host need (deploy.ts), whoever connects: the CLI or the master. */
export interface RemotePlan {
  kind: 'install' | 'update';
  name: string;
  master?: string;
  token?: string;
  /** `--master-tls-cert`: the PEM text, installed on the agent host as master-ca.pem. */
  masterTlsCert?: string;
  /** `--insecure`: the agent may send its credential to a remote master without TLS. */
  insecure: boolean;
  remoteDir?: string;
  nodePath?: string;
  force: boolean;
}

export interface Plan extends RemotePlan {
  /** How the CLI reaches the host itself; absent with `sshProfile`. */
  target?: SshTarget;
  /** `--ssh-profile`: the master connects with this profile and runs the steps. */
  sshProfile?: string;
  waitSeconds: number;
  /** `--master-url`: the master's REST API, to watch the agent register (and, with a profile, to install). */
  masterUrl?: string;
  previous?: LocalInstallRecord;
}

/** Options that say how to reach the host over SSH from the CLI, which a profile replaces. */
const OWN_SSH_OPTIONS = ['sshHost', 'sshUser', 'sshPort', 'sshKey', 'knownHosts', 'acceptNewHostKey'] as const;

export async function planFrom(
  kind: Plan['kind'],
  { args, options }: CommandInput,
  ctx: CommandContext,
): Promise<Plan> {
  const name = args[0];
  checkAgentName(name);
  const previous = await readLocalRecord(ctx.config.dataDir, name);
  const remembered = kind === 'update' ? previous : undefined;
  const master = options.master === undefined ? undefined : String(options.master);
  if (kind === 'install') need(master, '--master', ' (the gRPC address the agent dials, host:port)');
  if (master !== undefined) parseMasterAddress(master);
  // An install run on the master's host may take the token from its config (RUNNER_JOIN_TOKEN).
  const configuredToken = kind === 'install' ? ctx.config.find('agent.join_token') : undefined;
  const token =
    options.token !== undefined
      ? String(options.token)
      : typeof configuredToken === 'string' && configuredToken.trim() !== ''
        ? configuredToken.trim()
        : undefined;
  if (token !== undefined) checkToken(token, '--token');
  const masterTlsCert =
    options.masterTlsCert === undefined ? undefined : readCertificate(String(options.masterTlsCert));
  const remoteDir = (options.remoteDir as string | undefined) ?? remembered?.remote_dir;
  if (remoteDir !== undefined) checkRemoteDir(remoteDir, '--remote-dir');
  return {
    kind,
    name,
    ...reach(kind, options, remembered, ctx.config.dataDir, name),
    master,
    token,
    masterTlsCert,
    insecure: options.insecure === true,
    remoteDir,
    nodePath: (options.nodePath as string | undefined) ?? remembered?.node_path,
    waitSeconds: (options.wait as number | undefined) ?? DEFAULT_WAIT_SECONDS,
    force: options.force === true,
    masterUrl: options.masterUrl as string | undefined,
    previous,
  };
}

/** The CLI's own SSH target, or the profile the master connects with (never both). */
function reach(
  kind: Plan['kind'],
  options: CommandInput['options'],
  remembered: LocalInstallRecord | undefined,
  dataDir: string,
  name: string,
): Pick<Plan, 'target' | 'sshProfile'> {
  if (options.sshProfile !== undefined) {
    const own = OWN_SSH_OPTIONS.filter((option) => options[option] !== undefined);
    if (own.length > 0)
      throw new InvalidInputError(
        `--ssh-profile: the profile says how to reach the host; leave out ${own.map(flagOf).join(', ')}`,
        { field: 'ssh-profile' },
      );
    return { sshProfile: String(options.sshProfile) };
  }
  const why =
    kind === 'install'
      ? ''
      : ` (no earlier \`runner agent install ${name}\` from this machine is recorded in ${dataDir}/agent-installs)`;
  const host = need(options.sshHost ?? remembered?.ssh.host, '--ssh-host', why);
  const user = need(options.sshUser ?? remembered?.ssh.user, '--ssh-user', why);
  return {
    target: {
      host,
      user,
      port: (options.sshPort as number | undefined) ?? remembered?.ssh.port ?? 22,
      keyFile: (options.sshKey as string | undefined) ?? remembered?.ssh.key,
      knownHostsFile: (options.knownHosts as string | undefined) ?? remembered?.known_hosts ?? defaultKnownHostsFile(),
      acceptNewHostKey: options.acceptNewHostKey === true,
    },
  };
}

/** `sshHost` as its flag, `--ssh-host`. */
const flagOf = (option: string) => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** `field` is how the caller named the value: `--token` on the command line, `token` in a request body. */
const fieldOf = (field: string) => field.replace(/^--/, '');

export function checkAgentName(name: string | undefined): asserts name is string {
  if (!AGENT_NAME_PATTERN.test(name ?? '')) {
    throw new InvalidInputError(
      `agent name "${name}" must be 1-63 letters, digits, dots, dashes or underscores, starting with a letter or digit`,
      { field: 'name' },
    );
  }
}

export function checkToken(token: string, field: string): void {
  if (token === '' || [...token].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new InvalidInputError(`${field} must be non-empty and hold no control characters`, { field: fieldOf(field) });
}

export function checkRemoteDir(dir: string, field: string): void {
  if (!(SAFE_PATH.test(dir) || SAFE_PATH.test(dir.replace(/^~/, ''))))
    throw new InvalidInputError(
      `${field} "${dir}" must be an absolute path (or ~/...) of letters, digits and . _ / + -`,
      { field: fieldOf(field) },
    );
}

/** The values of agent.env as this module writes them (`KEY='value'`, `'\''` for a quote). */
export function parseAgentEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    let value = '';
    const raw = match[2];
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] === "'") {
        const end = raw.indexOf("'", i + 1);
        value += raw.slice(i + 1, end < 0 ? raw.length : end);
        i = end < 0 ? raw.length : end;
      } else if (raw[i] === '\\' && i + 1 < raw.length) {
        value += raw[++i];
      } else {
        value += raw[i];
      }
    }
    env[match[1]] = value;
  }
  return env;
}

/** The master's certificate on the agent host, beside agent.env. */
export const MASTER_CA_FILE = 'master-ca.pem';

export function agentEnv(
  dir: string,
  name: string,
  master: string,
  token: string | undefined,
  tls: boolean,
  insecure = false,
): Record<string, string> {
  // Config keys of the agent profile (plugins/agent): agent.name, master.address, agent.join_token,
  // agent.master_tls_cert.
  const env: Record<string, string> = {
    RUNNER_DATA_DIR: `${dir}/data`,
    RUNNER_AGENT_NAME: name,
    RUNNER_MASTER_ADDR: master,
  };
  if (token !== undefined) env.RUNNER_JOIN_TOKEN = token;
  if (tls) env.RUNNER_AGENT_MASTER_TLS_CERT = `${dir}/${MASTER_CA_FILE}`;
  // Without TLS the agent refuses a master beyond its host unless told (plugins/agent, agent.insecure).
  if (insecure) env.RUNNER_AGENT_INSECURE = 'true';
  return env;
}

/** Read and checked here, so that a wrong path fails before anything is done on the remote host. */
function readCertificate(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new InvalidInputError(`--master-tls-cert ${file}: ${missing ? 'no such file' : (error as Error).message}`, {
      field: 'master-tls-cert',
    });
  }
  checkCertificate(text, `--master-tls-cert ${file}`);
  return text;
}

/** A PEM certificate, never a key (the file goes to the agent host). `where` names it in the error. */
export function checkCertificate(text: string, where: string): void {
  if (!/^-----BEGIN CERTIFICATE-----$/m.test(text) || /PRIVATE KEY-----/.test(text)) {
    throw new InvalidInputError(`${where}: not a PEM certificate (give the master's certificate, never its key)`, {
      field: fieldOf(where.split(' ')[0]),
    });
  }
}
