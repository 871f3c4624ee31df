// `POST /agents/:name/install`: the master runs the install steps (deploy.ts) over the shared SSH
// client with a profile's credentials and pinned host key, which never leave it, and streams the
// progress to the caller (`runner agent install --ssh-profile`).
import type { Static } from '@runner/plugin-sdk/schema';
import {
  InvalidInputError,
  isRunnerError,
  noteForAudit,
  openEventStream,
  RunnerError,
  serve,
  STREAMED,
  type EventStream,
  type EventStreamOptions,
  type HttpRequest,
  type HttpRouter,
  type Redactor,
  type SshConnection,
  type SshProfiles,
} from '@runner/plugin-sdk';
import { postAgentsNameInstall } from '../api.js';
import type { InstallBody } from '../schemas.js';
import { collectBundle, type AgentBundle } from './bundle.js';
import { deployOver, type InstallSession, type Progress } from './deploy.js';
import {
  checkAgentName,
  checkCertificate,
  checkRemoteDir,
  checkToken,
  parseMasterAddress,
  type RemotePlan,
} from './install-plan.js';

export interface ProfileInstallOptions {
  /** Undefined without the ssh-profiles plugin: the route answers 503. */
  profiles: SshProfiles | undefined;
  redactor: Redactor;
  /** The master's own `agent.join_token`: the token an install is given when the body names none. */
  joinToken: string | undefined;
  /** Heartbeats, the bound on a slow client, the redactor (every line passes it), the kernel's stop. */
  stream: Pick<EventStreamOptions, 'heartbeatMs' | 'maxBufferedBytes' | 'redactor' | 'signal'>;
}

/** What one install through a profile works with, once connected. */
interface Connected {
  plan: RemotePlan;
  profile: string;
  host: string;
  /** What the audit record says the call was about. */
  about: string;
  bundle: AgentBundle;
  connection: SshConnection;
}

export function registerInstallRoute(router: HttpRouter, options: ProfileInstallOptions): void {
  router.add(
    serve(postAgentsNameInstall, async (request) => {
      const plan = planOf(request.params.name, request.body, options.joinToken);
      const profile = request.body.ssh_profile;
      const profiles = profilesOf(options);
      // Before the 200 goes out, so that each keeps its status: an unbuilt master (the bundle), an
      // unknown profile, an unpinned or changed host key, an unreachable host.
      const bundle = collectBundle();
      const { host } = await profiles.get(profile);
      const about = `${plan.kind} of agent ${plan.name} through SSH profile ${profile} (${host})`;
      // Noted before connecting: a refused host key is in the audit record too.
      noteForAudit(request, about);
      const actor = `agent-install:${plan.name}/${request.principal?.name ?? 'local'}`;
      const connection = await profiles.connect(profile, { actor });
      const forgetToken = plan.token === undefined ? () => {} : options.redactor.addSecret(plan.token);
      try {
        await streamDeploy(request, { plan, profile, host, about, bundle, connection }, options);
      } finally {
        connection.close();
        forgetToken();
      }
      return STREAMED;
    }),
  );
}

/** The steps with their progress as `line` events, then `done` or `failed`; the audit record says which. */
async function streamDeploy(request: HttpRequest, job: Connected, options: ProfileInstallOptions): Promise<void> {
  const { plan, profile, host, about, connection } = job;
  const stream = openEventStream(request.raw.res, { ...options.stream, comment: about });
  const progress = progressOf(stream);
  const key = connection.hostKey;
  progress.say(`host key ${key.type} ${key.fingerprint} of ${host} matches the one pinned in SSH profile ${profile}`);
  try {
    const deployed = await deployOver(sessionOf(connection), plan, host, job.bundle, progress);
    noteForAudit(request, `${about}: started, pid ${deployed.pid}`);
    stream.end(deployed, 'done');
  } catch (error) {
    const failure = failureOf(error);
    noteForAudit(request, `${about}: failed: ${failure.message}`);
    stream.end(failure, 'failed');
  }
}

function profilesOf(options: ProfileInstallOptions): SshProfiles {
  if (options.profiles) return options.profiles;
  throw new RunnerError(
    'ssh_profiles_unavailable',
    'no SSH profiles on this master (the ssh-profiles plugin is not loaded)',
    { status: 503 },
  );
}

/** The body as the steps take it, checked as the CLI checks its flags (naming the body's fields). */
function planOf(name: string, body: Static<typeof InstallBody>, joinToken: string | undefined): RemotePlan {
  checkAgentName(name);
  const kind = body.update === true ? 'update' : 'install';
  if (kind === 'install' && body.master === undefined)
    throw new InvalidInputError('master: the gRPC address the agent dials (host:port) is required to install', {
      field: 'master',
    });
  if (body.master !== undefined) parseMasterAddress(body.master);
  const token = body.token ?? (kind === 'install' ? joinToken : undefined);
  if (token !== undefined) checkToken(token, 'token');
  if (body.master_tls_cert !== undefined) checkCertificate(body.master_tls_cert, 'master_tls_cert');
  if (body.remote_dir !== undefined) checkRemoteDir(body.remote_dir, 'remote_dir');
  return {
    kind,
    name,
    master: body.master,
    token,
    masterTlsCert: body.master_tls_cert,
    insecure: body.insecure === true,
    remoteDir: body.remote_dir,
    nodePath: body.node_path,
    force: body.force === true,
  };
}

/** The profile's connection as the steps use it; every command goes to the profile's audit log. */
function sessionOf(connection: SshConnection): InstallSession {
  return {
    exec: (script, { step, timeoutMs }) => connection.exec(`/bin/sh -s ${step}`, { stdin: script, timeoutMs }),
    pipe: (command, input, timeoutMs = 30 * 60_000) => connection.exec(command, { stdin: input, timeoutMs }),
  };
}

function progressOf(stream: EventStream): Progress {
  return {
    say: (text) => stream.send({ level: 'info', text }, 'line'),
    warn: (text) => stream.send({ level: 'warning', text }, 'line'),
  };
}

function failureOf(error: unknown): { code: string; message: string; status: number } {
  if (isRunnerError(error)) return { code: error.code, message: error.message, status: error.status };
  return { code: 'internal_error', message: error instanceof Error ? error.message : String(error), status: 500 };
}
