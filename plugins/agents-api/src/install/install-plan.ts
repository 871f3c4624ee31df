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

export interface Plan {
  kind: 'install' | 'update';
  name: string;
  target: SshTarget;
  master?: string;
  token?: string;
  /** `--master-tls-cert`: the PEM text, installed on the agent host as master-ca.pem. */
  masterTlsCert?: string;
  /** `--insecure`: the agent may send its credential to a remote master without TLS. */
  insecure: boolean;
  remoteDir?: string;
  nodePath?: string;
  waitSeconds: number;
  force: boolean;
  /** `--master-url`: the master's REST API, to watch the agent register. */
  masterUrl?: string;
  previous?: LocalInstallRecord;
}

export async function planFrom(
  kind: Plan['kind'],
  { args, options }: CommandInput,
  ctx: CommandContext,
): Promise<Plan> {
  const name = args[0];
  if (!AGENT_NAME_PATTERN.test(name ?? '')) {
    throw new InvalidInputError(
      `agent name "${name}" must be 1-63 letters, digits, dots, dashes or underscores, starting with a letter or digit`,
      { field: 'name' },
    );
  }
  const previous = await readLocalRecord(ctx.config.dataDir, name);
  const why =
    kind === 'install'
      ? ''
      : ` (no earlier \`runner agent install ${name}\` from this machine is recorded in ${ctx.config.dataDir}/agent-installs)`;
  const remembered = kind === 'update' ? previous : undefined;
  const host = need(options.sshHost ?? remembered?.ssh.host, '--ssh-host', why);
  const user = need(options.sshUser ?? remembered?.ssh.user, '--ssh-user', why);
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
  if (
    token !== undefined &&
    (token === '' || [...token].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
  ) {
    throw new InvalidInputError('--token must be non-empty and hold no control characters', { field: 'token' });
  }
  const masterTlsCert =
    options.masterTlsCert === undefined ? undefined : readCertificate(String(options.masterTlsCert));
  const remoteDir = (options.remoteDir as string | undefined) ?? remembered?.remote_dir;
  if (remoteDir !== undefined && !(SAFE_PATH.test(remoteDir) || SAFE_PATH.test(remoteDir.replace(/^~/, '')))) {
    throw new InvalidInputError(
      `--remote-dir "${remoteDir}" must be an absolute path (or ~/...) of letters, digits and . _ / + -`,
      { field: 'remote-dir' },
    );
  }
  return {
    kind,
    name,
    target: {
      host,
      user,
      port: (options.sshPort as number | undefined) ?? remembered?.ssh.port ?? 22,
      keyFile: (options.sshKey as string | undefined) ?? remembered?.ssh.key,
      knownHostsFile: (options.knownHosts as string | undefined) ?? remembered?.known_hosts ?? defaultKnownHostsFile(),
      acceptNewHostKey: options.acceptNewHostKey === true,
    },
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
  if (!/^-----BEGIN CERTIFICATE-----$/m.test(text) || /PRIVATE KEY-----/.test(text)) {
    throw new InvalidInputError(
      `--master-tls-cert ${file}: not a PEM certificate (give the master's certificate, never its key)`,
      { field: 'master-tls-cert' },
    );
  }
  return text;
}
