import type { CommandContext, CommandInput } from '@runner/plugin-sdk';
import { collectBundle } from './bundle.js';
import { deployOver, type Deployed, type Progress } from './deploy.js';
import { hostLabel } from './known-hosts.js';
import { writeLocalRecord } from './local-record.js';
import { SshSession, defaultKnownHostsFile, type SshTarget } from './ssh.js';
import { parseAgentEnv, parseMasterAddress, planFrom, type Plan } from './install-plan.js';
import { deployThroughMaster } from './through-master.js';
import { waitForRegistration } from './registration-wait.js';

// Parsers the tests and other modules reach through this module.
export { parseAgentEnv, parseMasterAddress };

export function installCommand(input: CommandInput, ctx: CommandContext): Promise<number> {
  return deploy('install', input, ctx);
}

export function updateCommand(input: CommandInput, ctx: CommandContext): Promise<number> {
  return deploy('update', input, ctx);
}

/**
 * Installs or updates over the CLI's own SSH connection, or with `--ssh-profile` through the
 * master (which holds the profile's key), then waits for the agent to register.
 */
async function deploy(kind: Plan['kind'], input: CommandInput, ctx: CommandContext): Promise<number> {
  const plan = await planFrom(kind, input, ctx);
  const progress: Progress = {
    say: (line) => ctx.stdout.write(`${line}\n`),
    warn: (line) => ctx.stderr.write(`warning: ${line}\n`),
  };
  // Registration must come from a process younger than this: an update's old process may still show.
  const startedAt = Date.now();
  const deployed = plan.target
    ? await deployOverOwnSsh(plan, plan.target, ctx, progress)
    : await deployThroughMaster(plan, ctx, progress);
  return waitForRegistration(ctx, plan, deployed, startedAt, progress);
}

/** The steps over this machine's SSH connection with the operator's credentials; remembered for `update`. */
async function deployOverOwnSsh(
  plan: Plan,
  target: SshTarget,
  ctx: CommandContext,
  progress: Progress,
): Promise<Deployed> {
  const where = hostLabel(target.host, target.port);
  // Before connecting: an unbuilt checkout fails here, having touched nothing.
  const bundle = collectBundle();
  progress.say(`connecting to ${target.user}@${where} ...`);
  const session = await SshSession.connect(target);
  const key = session.hostKey;
  progress.say(
    key.status === 'recorded'
      ? `host key ${key.type} ${key.fingerprint} of ${where} was not known; trusted (--accept-new-host-key) and recorded in ${key.where}`
      : `host key ${key.type} ${key.fingerprint} matches ${key.where}`,
  );
  let deployed: Deployed;
  try {
    deployed = await deployOver(session, plan, target.host, bundle, progress);
  } finally {
    session.close();
  }
  const now = new Date().toISOString();
  const record = await writeLocalRecord(ctx.config.dataDir, {
    name: plan.name,
    ssh: { host: target.host, port: target.port, user: target.user, key: target.keyFile },
    known_hosts: target.knownHostsFile === defaultKnownHostsFile() ? undefined : target.knownHostsFile,
    node_path: plan.nodePath,
    remote_dir: deployed.dir,
    service: deployed.service,
    master: deployed.master,
    version: bundle.version,
    installed_at: plan.previous?.installed_at && plan.kind === 'update' ? plan.previous.installed_at : now,
    updated_at: now,
  });
  ctx.logger.info(`agent ${plan.kind}`, {
    agent: plan.name,
    host: target.host,
    dir: deployed.dir,
    service: deployed.service,
    record,
  });
  return deployed;
}
