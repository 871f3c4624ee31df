import { join, resolve } from 'node:path';
import {
  ClusterRef,
  ConflictError,
  definePlugin,
  FlowsRef,
  HooksRef,
  HttpRouterRef,
  optional,
  parseDuration,
  SchedulesRef,
  SecretsRef,
  SshProfilesRef,
  StoreRef,
  WorkflowEngineRef,
  type RunnerConfig,
} from '@runner/plugin-sdk';
import { routes } from './api.js';
import { gitopsCommand } from './commands.js';

export const CONFIG = {
  url: 'gitops.url',
  branch: 'gitops.branch',
  path: 'gitops.path',
  manifest: 'gitops.manifest',
  interval: 'gitops.interval',
  sshKeyFile: 'gitops.ssh_key_file',
  sshKeySecret: 'gitops.ssh_key_secret',
  passwordSecret: 'gitops.password_secret',
  username: 'gitops.username',
  knownHosts: 'gitops.known_hosts',
  acceptNewHostKey: 'gitops.accept_new_host_key',
  sshProfile: 'gitops.ssh_profile',
  webhookSecret: 'gitops.webhook_secret',
} as const;

const text = (help: string, extra: { secret?: boolean; default?: string } = {}) => ({
  schema: { type: 'string' as const },
  default: extra.default ?? '',
  help,
  ...(extra.secret ? { secret: true } : {}),
});

function credentials(config: RunnerConfig) {
  const knownHosts = config.get<string>(CONFIG.knownHosts);
  return {
    sshKeyFile: config.get<string>(CONFIG.sshKeyFile),
    sshKeySecret: config.get<string>(CONFIG.sshKeySecret),
    passwordSecret: config.get<string>(CONFIG.passwordSecret),
    username: config.get<string>(CONFIG.username),
    knownHosts: knownHosts ? resolve(config.dataDir, knownHosts) : join(config.dataDir, 'gitops', 'known_hosts'),
    acceptNewHostKey: config.get<boolean>(CONFIG.acceptNewHostKey),
    sshProfile: config.get<string>(CONFIG.sshProfile),
  };
}

/**
 * GitOps: a git branch's workflow files become saved flows (one per file, a version per commit
 * that changes one), its manifest's hooks and schedules are applied through those plugins'
 * services, all in one unit of work (all or nothing), one sync at a time across masters;
 * /api/v1/gitops and the CLI.
 */
export const plugin = definePlugin({
  id: 'gitops',
  version: '0.1.0',
  routes,
  description: 'GitOps: flows, hooks and schedules synced from a git repository; sync, status, diff, webhook',
  profiles: ['master'],
  dependsOn: {
    store: StoreRef,
    engine: WorkflowEngineRef,
    flows: FlowsRef,
    hooks: optional(HooksRef),
    schedules: optional(SchedulesRef),
    secrets: optional(SecretsRef),
    profiles: optional(SshProfilesRef),
    router: optional(HttpRouterRef),
    cluster: optional(ClusterRef),
  },
  config: {
    [CONFIG.url]: text(
      'the repository: ssh://git@host/org/repo.git, git@host:org/repo.git, https://host/org/repo.git or file:///path; empty: GitOps is off (credentials never in the URL)',
    ),
    [CONFIG.branch]: text('the branch synced', { default: 'main' }),
    [CONFIG.path]: text(
      'the directory inside the repository whose workflow files (*.yaml, *.yml) become flows; empty: its root',
    ),
    [CONFIG.manifest]: text('the manifest of hooks and schedules, at the root of gitops.path', {
      default: 'runner.yaml',
    }),
    [CONFIG.interval]: text('sync this often (a duration such as 5m); empty: only on demand and by the webhook'),
    [CONFIG.sshKeyFile]: text('SSH: a private key file on the master host'),
    [CONFIG.sshKeySecret]: text('SSH: a private key kept by the secrets plugin, as scope/name'),
    [CONFIG.sshProfile]: text(
      "SSH: an SSH profile (runner ssh) whose key and pinned host key git uses; the URL's host must be the profile's",
    ),
    [CONFIG.passwordSecret]: text(
      'HTTPS: a password or token kept by the secrets plugin, as scope/name (given to git by an askpass helper)',
    ),
    [CONFIG.username]: text('HTTPS: the user name that goes with gitops.password_secret', { default: 'git' }),
    [CONFIG.knownHosts]: text(
      "SSH: the known_hosts file the server's key is checked against; empty: <data dir>/gitops/known_hosts",
    ),
    [CONFIG.acceptNewHostKey]: {
      schema: { type: 'boolean' },
      default: false,
      help: 'SSH: record an unknown server key on first contact (else it must be in the known_hosts file)',
    },
    [CONFIG.webhookSecret]: text(
      'the shared secret of POST /api/v1/gitops/webhook (X-Hub-Signature-256); empty: the webhook is off',
      {
        secret: true,
      },
    ),
  },
  async schema() {
    const { GITOPS_MIGRATIONS } = await import('./gitops.js');
    return [{ owner: 'gitops', migrations: GITOPS_MIGRATIONS }];
  },
  commands: [gitopsCommand],
  async setup(ctx, { store, engine, flows, hooks, schedules, secrets, profiles, router, cluster }) {
    const [{ GitOps }, { openGitSession }, { registerGitopsRoutes }] = await Promise.all([
      import('./gitops.js'),
      import('./auth.js'),
      import('./routes.js'),
    ]);
    const { config } = ctx;
    const settings = {
      url: config.get<string>(CONFIG.url),
      branch: config.get<string>(CONFIG.branch),
      path: config.get<string>(CONFIG.path),
      manifest: config.get<string>(CONFIG.manifest),
    };
    const gitops = new GitOps({
      store,
      engine,
      flows,
      hooks,
      schedules,
      settings,
      mirrorDir: join(config.dataDir, 'gitops', 'mirror.git'),
      openSession: () => {
        if (!settings.url) throw new ConflictError('GitOps is off: set gitops.url (and gitops.branch, gitops.path)');
        return openGitSession(credentials(config), { secrets, profiles }, settings.url);
      },
      masterId: cluster?.masterId ?? 'local',
      logger: ctx.logger,
      events: ctx.events,
    });
    await gitops.open();
    const offLost = cluster?.onMasterLost((master) => gitops.releaseClaimsOf(master.id));
    if (offLost) ctx.onStop(offLost);
    if (router)
      registerGitopsRoutes(router, gitops, {
        branch: settings.branch,
        webhookSecret: () => config.get<string>(CONFIG.webhookSecret),
        logger: ctx.logger,
      });

    const every = config.get<string>(CONFIG.interval);
    if (settings.url && every) {
      const ms = parseDuration(every);
      let timer: NodeJS.Timeout | undefined;
      // Every master ticks; the claim lets one sync at a time, the others hear "in progress".
      const tick = () =>
        gitops.sync('interval').catch((error: Error) => {
          if (!(error instanceof ConflictError)) ctx.logger.warn(`GitOps periodic sync failed: ${error.message}`);
        });
      ctx.lifecycle.ready.tapPromise('gitops', async () => {
        timer = setInterval(() => void tick(), ms);
        timer.unref();
      });
      ctx.onStop(() => clearInterval(timer));
    }
  },
});
