// `runner agent install|update --ssh-profile <name>`: the master connects with the profile (its
// key never leaves the master) and runs the steps; this side sends the plan and prints the progress.
import {
  createMasterClient,
  readEventStream,
  requireMaster,
  RunnerError,
  type CommandContext,
} from '@runner/plugin-sdk';
import type { Static } from '@runner/plugin-sdk/schema';
import type { InstallBody } from '../schemas.js';
import type { Deployed, Progress } from './deploy.js';
import type { Plan } from './install-plan.js';

/** What the route streams: progress lines, then how it ended. */
type Line = { level: 'info' | 'warning'; text: string };
type Failure = { code: string; message: string; status: number };

export async function deployThroughMaster(plan: Plan, ctx: CommandContext, progress: Progress): Promise<Deployed> {
  const endpoint = await requireMaster(ctx, plan.masterUrl);
  const master = createMasterClient(endpoint, { dataDir: ctx.config.dataDir });
  progress.say(
    `asking the master at ${endpoint.base} to ${plan.kind} agent ${plan.name} through SSH profile ${plan.sshProfile} ...`,
  );
  // No timeout: the upload and start take as long as they take; a refusal comes before the stream.
  const answer = await master.request('POST', `/agents/${encodeURIComponent(plan.name)}/install`, {
    body: bodyOf(plan),
    timeoutMs: 0,
    headers: { accept: 'text/event-stream' },
  });
  for await (const { event, data } of readEventStream(answer)) {
    if (event === 'line') {
      const line = data as Line;
      (line.level === 'warning' ? progress.warn : progress.say)(line.text);
    } else if (event === 'done') return data as Deployed;
    else if (event === 'failed') {
      const failure = data as Failure;
      throw new RunnerError(failure.code, failure.message, { status: failure.status });
    } else if (event === 'end') break; // the master is stopping
  }
  throw new RunnerError(
    'install_interrupted',
    `the master at ${endpoint.base} ended the ${plan.kind} of ${plan.name} without saying how it went: see its log and \`runner ssh audit ${plan.sshProfile}\``,
    { status: 502 },
  );
}

function bodyOf(plan: Plan): Static<typeof InstallBody> {
  return {
    ssh_profile: plan.sshProfile as string,
    ...(plan.kind === 'update' ? { update: true } : {}),
    ...(plan.master === undefined ? {} : { master: plan.master }),
    ...(plan.token === undefined ? {} : { token: plan.token }),
    ...(plan.masterTlsCert === undefined ? {} : { master_tls_cert: plan.masterTlsCert }),
    ...(plan.insecure ? { insecure: true } : {}),
    ...(plan.remoteDir === undefined ? {} : { remote_dir: plan.remoteDir }),
    ...(plan.nodePath === undefined ? {} : { node_path: plan.nodePath }),
    ...(plan.force ? { force: true } : {}),
  };
}
