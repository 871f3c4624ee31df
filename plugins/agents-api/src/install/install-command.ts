import { Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import {
  ConflictError,
  InvalidInputError,
  NotFoundError,
  RunnerError,
  formatBytes,
  type CommandContext,
  type CommandInput,
} from '@runner/plugin-sdk';
import { collectBundle, releaseName, type AgentBundle } from './bundle.js';
import { hostLabel } from './known-hosts.js';
import { writeLocalRecord } from './local-record.js';
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
import { SshSession, defaultKnownHostsFile } from './ssh.js';
import { agentEnv, MASTER_CA_FILE, parseAgentEnv, parseMasterAddress, planFrom, type Plan } from './install-plan.js';
import { waitForRegistration } from './registration-wait.js';

// Parsers the tests and other modules reach through this module.
export { parseAgentEnv, parseMasterAddress };

export function installCommand(input: CommandInput, ctx: CommandContext): Promise<number> {
  return deploy('install', input, ctx);
}

export function updateCommand(input: CommandInput, ctx: CommandContext): Promise<number> {
  return deploy('update', input, ctx);
}

async function deploy(kind: Plan['kind'], input: CommandInput, ctx: CommandContext): Promise<number> {
  const plan = await planFrom(kind, input, ctx);
  const say = (line: string) => ctx.stdout.write(`${line}\n`);
  const warn = (line: string) => ctx.stderr.write(`warning: ${line}\n`);
  const { target, name } = plan;
  const where = hostLabel(target.host, target.port);

  // Before connecting: an unbuilt checkout fails here, having touched nothing.
  const bundle = collectBundle();

  say(`connecting to ${target.user}@${where} ...`);
  const session = await SshSession.connect(target);
  const key = session.hostKey;
  say(
    key.status === 'recorded'
      ? `host key ${key.type} ${key.fingerprint} of ${where} was not known; trusted (--accept-new-host-key) and recorded in ${key.where}`
      : `host key ${key.type} ${key.fingerprint} matches ${key.where}`,
  );

  let facts: RemoteFacts;
  let mode: ServiceMode;
  let master: string;
  let pid: string;
  let startedAt = Date.now();
  let masterReach: string;
  let logHint: string;
  try {
    facts = await probe(session, plan, bundle);
    say(
      `${target.host}: ${facts.os} ${facts.arch}, Node ${facts.nodeVersion} (${facts.node}), user ${facts.user}, PID 1 ${facts.pid1}`,
    );
    const remoteArch =
      ({ x86_64: 'x64', aarch64: 'arm64', armv7l: 'arm' } as Record<string, string>)[facts.arch] ?? facts.arch;
    if (bundle.nativeAddons.length > 0 && remoteArch !== process.arch) {
      say(
        `note: the bundle's native add-ons are built for ${process.platform}-${process.arch}; on ${facts.arch} they do not load and their JavaScript fallbacks are used`,
      );
    }
    const installed = facts.installed;
    if (kind === 'install' && installed && !plan.force) {
      throw new ConflictError(
        `agent ${name} is already installed on ${target.host} in ${facts.dir} (runner ${installed.version}, installed ${installed.installed_at}): ` +
          `use \`runner agent update ${name}\`, or --force to install over it`,
      );
    }
    if (kind === 'update' && !installed) {
      throw new NotFoundError(
        `no agent ${name} is installed on ${target.host} in ${facts.dir} (no install.json there): install it with \`runner agent install ${name}\``,
      );
    }
    if (installed && installed.name !== name) {
      throw new ConflictError(`${facts.dir} on ${target.host} holds agent ${installed.name}, not ${name}`);
    }

    let env: Record<string, string> | undefined;
    if (kind === 'install') {
      master = plan.master as string;
      const service = chooseService(facts, target.host);
      mode = service.mode;
      if (mode === 'systemd') say(`service: ${service.note} ${unitName(name)}`);
      else if (mode === 'systemd-user' && facts.linger) say(`service: ${service.note}`);
      else warn(service.note);
      env = agentEnv(facts.dir, name, master, plan.token, plan.masterTlsCert !== undefined, plan.insecure);
    } else {
      // An update keeps the way the agent is run; --master and --token rewrite agent.env.
      mode = (installed as InstallRecord).service;
      master = plan.master ?? (installed as InstallRecord).master;
      say(`service: ${mode === 'nohup' ? 'nohup (as installed)' : `${unitName(name)} (${mode}, as installed)`}`);
      if (plan.master !== undefined || plan.token !== undefined || plan.masterTlsCert !== undefined) {
        const current = parseAgentEnv((await session.exec(`cat ${facts.dir}/agent.env 2>/dev/null\n`)).stdout);
        const token = plan.token ?? current.RUNNER_JOIN_TOKEN;
        const tls = plan.masterTlsCert !== undefined || current.RUNNER_AGENT_MASTER_TLS_CERT !== undefined;
        env = { ...current, ...agentEnv(facts.dir, name, master, token, tls) };
      }
    }

    const release = releaseName(bundle.version);
    const node = facts.node as string;
    await upload(session, bundle, facts.dir, release, say);

    const now = new Date().toISOString();
    const record: InstallRecord = {
      name,
      version: bundle.version,
      release,
      service: mode,
      unit: mode === 'nohup' ? undefined : unitName(name),
      node,
      master,
      installed_at: installed && kind === 'update' ? installed.installed_at : now,
      updated_at: now,
    };
    // Registration must come from a process younger than this: an update's old process may still show.
    startedAt = Date.now();
    const files = plan.masterTlsCert === undefined ? undefined : { [MASTER_CA_FILE]: plan.masterTlsCert };
    const activated = await session.exec(
      activateScript({ name, dir: facts.dir, release, node, mode, record, env, files }),
      {
        timeoutMs: 120_000,
      },
    );
    const result = parseActivation(activated.stdout);
    for (const w of result.warnings) warn(w);
    if (result.failed || !result.pid) {
      const log = result.log.trim() || activated.stderr.trim();
      throw new RunnerError(
        'agent_start_failed',
        `runner ${bundle.version} was unpacked on ${target.host} in ${facts.dir}/releases/${release}, but the agent did not start: ` +
          `${result.failed ?? `the start script failed (exit ${activated.code})`}${log ? `. Its last log lines:\n${log}` : ''}`,
        { status: 502 },
      );
    }
    pid = result.pid;
    const stopped = result.stoppedOld?.trim().split(/\s+/).filter(Boolean) ?? [];
    if (stopped.length > 0) say(`stopped the previous agent process (pid ${stopped.join(', ')})`);
    logHint =
      mode === 'nohup'
        ? `${facts.dir}/agent.log`
        : `journalctl ${mode === 'systemd-user' ? '--user ' : ''}-u ${unitName(name)}`;
    say(
      `${kind === 'install' ? 'started' : 'restarted'} agent ${name} on ${target.host} (pid ${pid}, ${mode}); log: ${logHint}`,
    );

    const { host: masterHost, port: masterPort } = parseMasterAddress(master);
    masterReach = (
      await session.exec(masterProbeScript(node, masterHost, masterPort), { timeoutMs: 20_000 })
    ).stdout.trim();
    if (masterReach !== 'ok') {
      warn(
        `${target.host} cannot reach the master at ${master} (${masterReach || 'no answer'}): the agent keeps retrying with backoff. ` +
          `Start the master there (runner server), or point the agent elsewhere with \`runner agent update ${name} --master host:port\``,
      );
    }
  } catch (error) {
    session.close();
    throw error;
  }
  session.close();

  const localRecord = await writeLocalRecord(ctx.config.dataDir, {
    name,
    ssh: { host: target.host, port: target.port, user: target.user, key: target.keyFile },
    known_hosts: target.knownHostsFile === defaultKnownHostsFile() ? undefined : target.knownHostsFile,
    node_path: plan.nodePath,
    remote_dir: facts.dir,
    service: mode,
    master,
    version: bundle.version,
    installed_at:
      plan.previous?.installed_at && kind === 'update' ? plan.previous.installed_at : new Date().toISOString(),
    updated_at: new Date().toISOString(),
  });
  ctx.logger.info(`agent ${kind}`, {
    agent: name,
    host: target.host,
    dir: facts.dir,
    service: mode,
    record: localRecord,
  });

  return waitForRegistration(ctx, plan, master, masterReach, startedAt, logHint, say, warn);
}

async function probe(session: SshSession, plan: Plan, bundle: AgentBundle): Promise<RemoteFacts> {
  const result = await session.exec(probeScript(plan.name, plan.remoteDir, plan.nodePath));
  if (result.code !== 0) {
    throw new RunnerError(
      'remote_check_failed',
      `checking ${plan.target.host} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
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
      `${plan.target.host} lacks what the agent needs; nothing was changed there. Missing: ${missing.join('; ')}`,
      { status: 412 },
    );
  }
  if (!SAFE_PATH.test(facts.dir)) {
    throw new InvalidInputError(
      `the install directory ${facts.dir} on ${plan.target.host} has characters this installer does not quote; choose --remote-dir of letters, digits and . _ / + -`,
      { field: 'remote-dir' },
    );
  }
  return facts;
}

async function upload(
  session: SshSession,
  bundle: AgentBundle,
  dir: string,
  release: string,
  say: (line: string) => void,
): Promise<void> {
  say(
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
    await session.exec(discardScript(dir, release)).catch(() => undefined);
    throw new RunnerError(
      'upload_failed',
      `unpacking the upload in ${target} failed (tar exit ${result.code}): ${result.stderr.trim() || 'no error output'}`,
      { status: 502 },
    );
  }
  say(`uploaded ${formatBytes(compressed)} (gzip)`);
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
