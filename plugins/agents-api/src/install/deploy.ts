// The steps of `runner agent install` / `update` on the agent host, over whichever SSH connection
// reaches it: the CLI's own (the operator's credentials, ssh.ts) or, for `--ssh-profile`, the
// master's through a profile (whose key never leaves the master, profile-install.ts).
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import { ConflictError, InvalidInputError, NotFoundError, RunnerError, formatBytes } from '@runner/plugin-sdk';
import { releaseName, type AgentBundle } from './bundle.js';
import { agentEnv, MASTER_CA_FILE, parseAgentEnv, parseMasterAddress, type RemotePlan } from './install-plan.js';
import {
  SAFE_PATH,
  activateScript,
  chooseService,
  discardScript,
  masterProbeScript,
  missingOnRemote,
  parseFacts,
  probeScript,
  unitName,
  type InstallRecord,
  type RemoteFacts,
  type ServiceMode,
} from './remote.js';

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  signal?: string;
}

/** What the steps need of an SSH connection to the agent host. */
export interface InstallSession {
  /**
   * Runs a POSIX sh script sent on stdin (so the login shell's syntax does not matter); `step`
   * is passed as `sh -s <step>`, unused by the script, so that a profile's audit log says which.
   */
  exec(script: string, options: { step: string; timeoutMs?: number }): Promise<ExecResult>;
  /** Runs `command` with `input` piped to its stdin (the upload), to the end of both. */
  pipe(command: string, input: Readable, timeoutMs?: number): Promise<ExecResult>;
}

/** Where the steps tell what they do: the CLI's stdout and stderr, or the master's event stream. */
export interface Progress {
  say(line: string): void;
  warn(line: string): void;
}

/** What an install or update came to on the host. */
export interface Deployed {
  host: string;
  /** The install directory there. */
  dir: string;
  service: ServiceMode;
  /** The master address the agent dials. */
  master: string;
  pid: string;
  /** `ok`, or why the host could not reach the master. */
  master_reach: string;
  /** Where the agent's log is read on the host. */
  log: string;
}

/**
 * Checks the host, uploads `bundle`, writes the agent's files and (re)starts it, then checks the
 * host reaches the master. Throws naming what is missing or what failed; before the upload,
 * nothing was changed on the host.
 */
export async function deployOver(
  session: InstallSession,
  plan: RemotePlan,
  host: string,
  bundle: AgentBundle,
  progress: Progress,
): Promise<Deployed> {
  const facts = await probe(session, plan, host, bundle);
  progress.say(
    `${host}: ${facts.os} ${facts.arch}, Node ${facts.nodeVersion} (${facts.node}), user ${facts.user}, PID 1 ${facts.pid1}`,
  );
  noteForeignArch(facts, bundle, progress);
  const installed = checkInstalled(plan, host, facts);
  const { mode, master, env } = await serviceAndEnv(session, plan, host, facts, progress);
  const release = releaseName(bundle.version);
  await upload(session, bundle, facts.dir, release, progress);
  const now = new Date().toISOString();
  const record: InstallRecord = {
    name: plan.name,
    version: bundle.version,
    release,
    service: mode,
    unit: mode === 'nohup' ? undefined : unitName(plan.name),
    node: facts.node as string,
    master,
    installed_at: installed && plan.kind === 'update' ? installed.installed_at : now,
    updated_at: now,
  };
  const pid = await activate(session, plan, host, facts, record, env, progress);
  const log =
    mode === 'nohup'
      ? `${facts.dir}/agent.log`
      : `journalctl ${mode === 'systemd-user' ? '--user ' : ''}-u ${record.unit}`;
  progress.say(
    `${plan.kind === 'install' ? 'started' : 'restarted'} agent ${plan.name} on ${host} (pid ${pid}, ${mode}); log: ${log}`,
  );
  const reach = await probeMaster(session, plan, host, record, progress);
  return { host, dir: facts.dir, service: mode, master, pid, master_reach: reach, log };
}

async function probe(
  session: InstallSession,
  plan: RemotePlan,
  host: string,
  bundle: AgentBundle,
): Promise<RemoteFacts> {
  const result = await session.exec(probeScript(plan.name, plan.remoteDir, plan.nodePath), { step: 'probe' });
  if (result.code !== 0) {
    throw new RunnerError(
      'remote_check_failed',
      `checking ${host} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
      { status: 502 },
    );
  }
  const facts = parseFacts(result.stdout);
  // Unpacked size, plus the previous release kept beside it during an update.
  const neededKiB = Math.ceil((bundle.bytes * 1.2) / 1024);
  const missing = missingOnRemote(facts, plan.nodePath, neededKiB);
  if (missing.length > 0) {
    throw new RunnerError(
      'remote_unfit',
      `${host} lacks what the agent needs; nothing was changed there. Missing: ${missing.join('; ')}`,
      { status: 412 },
    );
  }
  if (!SAFE_PATH.test(facts.dir)) {
    throw new InvalidInputError(
      `the install directory ${facts.dir} on ${host} has characters this installer does not quote; choose --remote-dir of letters, digits and . _ / + -`,
      { field: 'remote-dir' },
    );
  }
  return facts;
}

function noteForeignArch(facts: RemoteFacts, bundle: AgentBundle, progress: Progress): void {
  const remoteArch =
    ({ x86_64: 'x64', aarch64: 'arm64', armv7l: 'arm' } as Record<string, string>)[facts.arch] ?? facts.arch;
  if (bundle.nativeAddons.length > 0 && remoteArch !== process.arch) {
    progress.say(
      `note: the bundle's native add-ons are built for ${process.platform}-${process.arch}; on ${facts.arch} they do not load and their JavaScript fallbacks are used`,
    );
  }
}

/** The agent installed there already, refused for an install (unless forced) and required for an update. */
function checkInstalled(plan: RemotePlan, host: string, facts: RemoteFacts): InstallRecord | undefined {
  const { kind, name } = plan;
  const installed = facts.installed;
  if (kind === 'install' && installed && !plan.force) {
    throw new ConflictError(
      `agent ${name} is already installed on ${host} in ${facts.dir} (runner ${installed.version}, installed ${installed.installed_at}): ` +
        `use \`runner agent update ${name}\`, or --force to install over it`,
    );
  }
  if (kind === 'update' && !installed) {
    throw new NotFoundError(
      `no agent ${name} is installed on ${host} in ${facts.dir} (no install.json there): install it with \`runner agent install ${name}\``,
    );
  }
  if (installed && installed.name !== name) {
    throw new ConflictError(`${facts.dir} on ${host} holds agent ${installed.name}, not ${name}`);
  }
  return installed;
}

/**
 * How the agent is run and what agent.env holds: chosen for an install; for an update, as
 * installed, agent.env rewritten only when --master, --token or --master-tls-cert change it.
 */
async function serviceAndEnv(
  session: InstallSession,
  plan: RemotePlan,
  host: string,
  facts: RemoteFacts,
  progress: Progress,
): Promise<{ mode: ServiceMode; master: string; env?: Record<string, string> }> {
  const { name } = plan;
  if (plan.kind === 'install') {
    const master = plan.master as string;
    const service = chooseService(facts, host);
    if (service.mode === 'systemd') progress.say(`service: ${service.note} ${unitName(name)}`);
    else if (service.mode === 'systemd-user' && facts.linger) progress.say(`service: ${service.note}`);
    else progress.warn(service.note);
    const tls = plan.masterTlsCert !== undefined;
    return { mode: service.mode, master, env: agentEnv(facts.dir, name, master, plan.token, tls, plan.insecure) };
  }
  const installed = facts.installed as InstallRecord;
  const mode = installed.service;
  const master = plan.master ?? installed.master;
  progress.say(`service: ${mode === 'nohup' ? 'nohup (as installed)' : `${unitName(name)} (${mode}, as installed)`}`);
  if (plan.master === undefined && plan.token === undefined && plan.masterTlsCert === undefined)
    return { mode, master };
  const read = await session.exec(`cat ${facts.dir}/agent.env 2>/dev/null\n`, { step: 'read-env' });
  const current = parseAgentEnv(read.stdout);
  const token = plan.token ?? current.RUNNER_JOIN_TOKEN;
  const tls = plan.masterTlsCert !== undefined || current.RUNNER_AGENT_MASTER_TLS_CERT !== undefined;
  return { mode, master, env: { ...current, ...agentEnv(facts.dir, name, master, token, tls) } };
}

async function upload(
  session: InstallSession,
  bundle: AgentBundle,
  dir: string,
  release: string,
  progress: Progress,
): Promise<void> {
  progress.say(
    `uploading runner ${bundle.version} (${bundle.files} files, ${formatBytes(bundle.bytes)}) to ${dir}/releases/${release}`,
  );
  let compressed = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      compressed += chunk.length;
      done(null, chunk);
    },
  });
  const { tarStream } = await import('./tar.js');
  // Level 1: the archive is mostly JavaScript and wasm; higher levels cost seconds of CPU for a few percent.
  const source = tarStream(bundle.entries)
    .pipe(createGzip({ level: 1 }))
    .pipe(counter);
  const target = `${dir}/releases/${release}.partial`;
  const result = await session.pipe(`/bin/sh -c 'mkdir -p ${target} && exec tar -xzf - -C ${target}'`, source);
  if (result.code !== 0) {
    await session.exec(discardScript(dir, release), { step: 'discard' }).catch(() => undefined);
    throw new RunnerError(
      'upload_failed',
      `unpacking the upload in ${target} failed (tar exit ${result.code}): ${result.stderr.trim() || 'no error output'}`,
      { status: 502 },
    );
  }
  progress.say(`uploaded ${formatBytes(compressed)} (gzip)`);
}

/** Puts the release in place and (re)starts the agent; answers its pid. */
async function activate(
  session: InstallSession,
  plan: RemotePlan,
  host: string,
  facts: RemoteFacts,
  record: InstallRecord,
  env: Record<string, string> | undefined,
  progress: Progress,
): Promise<string> {
  const files = plan.masterTlsCert === undefined ? undefined : { [MASTER_CA_FILE]: plan.masterTlsCert };
  const { name, release, node, service: mode } = record;
  const script = activateScript({ name, dir: facts.dir, release, node, mode, record, env, files });
  const activated = await session.exec(script, { step: 'activate', timeoutMs: 120_000 });
  const result = parseActivation(activated.stdout);
  for (const warning of result.warnings) progress.warn(warning);
  if (result.failed || !result.pid) {
    const log = result.log.trim() || activated.stderr.trim();
    throw new RunnerError(
      'agent_start_failed',
      `runner ${record.version} was unpacked on ${host} in ${facts.dir}/releases/${release}, but the agent did not start: ` +
        `${result.failed ?? `the start script failed (exit ${activated.code})`}${log ? `. Its last log lines:\n${log}` : ''}`,
      { status: 502 },
    );
  }
  const stopped = result.stoppedOld?.trim().split(/\s+/).filter(Boolean) ?? [];
  if (stopped.length > 0) progress.say(`stopped the previous agent process (pid ${stopped.join(', ')})`);
  return result.pid;
}

/** Whether the agent host reaches the master's gRPC port (`ok`, or why not); a warning when it does not. */
async function probeMaster(
  session: InstallSession,
  plan: RemotePlan,
  host: string,
  record: InstallRecord,
  progress: Progress,
): Promise<string> {
  const { host: masterHost, port: masterPort } = parseMasterAddress(record.master);
  const script = masterProbeScript(record.node, masterHost, masterPort);
  const reach = (await session.exec(script, { step: 'reach-master', timeoutMs: 20_000 })).stdout.trim();
  if (reach !== 'ok') {
    progress.warn(
      `${host} cannot reach the master at ${record.master} (${reach || 'no answer'}): the agent keeps retrying with backoff. ` +
        `Start the master there (runner server), or point the agent elsewhere with \`runner agent update ${plan.name} --master host:port\``,
    );
  }
  return reach;
}

interface Activation {
  pid?: string;
  failed?: string;
  stoppedOld?: string;
  warnings: string[];
  log: string;
}

export function parseActivation(stdout: string): Activation {
  const [head, log = ''] = stdout.split('---log---\n');
  const out: Activation = { warnings: [], log };
  for (const line of head.split('\n')) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const [key, value] = [line.slice(0, eq), line.slice(eq + 1)];
    if (key === 'pid') out.pid = value;
    else if (key === 'failed') out.failed = value;
    else if (key === 'stopped_old') out.stoppedOld = value;
    else if (key === 'warning') out.warnings.push(value);
  }
  return out;
}
