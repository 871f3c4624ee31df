import {
  AgentDelegatorRef,
  AgentRegistryRef,
  AgentTerminalsRef,
  ClusterRef,
  definePlugin,
  HttpRouterRef,
  optional,
  StateServiceRef,
  StoreRef,
} from '@runner/plugin-sdk';
import { agentTokenCommand } from './commands.js';
import { readMasterConfig, TRANSPORT_CONFIG } from './config.js';
import { JoinTokens } from './token.js';

/**
 * The master side of the agent transport: the gRPC server agents dial (grpc.port, default 50053),
 * their registry and task delegation. The agent side is the `agent` plugin.
 */
export const plugin = definePlugin({
  id: 'agent-transport',
  version: '0.1.0',
  description:
    'Master side of the agent transport: gRPC server, join tokens, TLS, heartbeats, agent registry, task delegation',
  profiles: ['master'],
  provides: [AgentRegistryRef, AgentDelegatorRef, AgentTerminalsRef],
  dependsOn: {
    store: optional(StoreRef),
    http: optional(HttpRouterRef),
    state: optional(StateServiceRef),
    // Several masters on one store: agents connected to another master are reached through it.
    cluster: optional(ClusterRef),
  },
  async schema() {
    const [{ IDENTITY_MIGRATIONS }, { AGENT_MIGRATIONS }] = await Promise.all([
      import('./identities.js'),
      import('./agent-store.js'),
    ]);
    return [
      { owner: 'agent-identities', migrations: IDENTITY_MIGRATIONS },
      { owner: 'agent-transport', migrations: AGENT_MIGRATIONS },
    ];
  },
  commands: [agentTokenCommand],
  config: TRANSPORT_CONFIG,
  // The gRPC side's flags on the master command; their values reach readMasterConfig as config.
  commandOptions: [
    {
      command: 'server',
      options: [
        { flags: '--port <n>', description: 'gRPC port agents connect to (default 50053)', configKey: 'grpc.port' },
        {
          flags: '--grpc-bind-address <addr>',
          description: 'address the gRPC server binds (default: --bind-address, else 127.0.0.1)',
          configKey: 'grpc.bind_address',
        },
        // --tls-cert/--tls-key are the HTTP plugin's (http.tls_*), which grpc.tls_* default to.
      ],
    },
  ],
  // How a CLI command finds a master by its gRPC address (RUNNER_MASTER_ADDR): Master.Describe.
  masterLocator: async () => {
    const { describeMaster } = await import('@runner/proto');
    return {
      describe: (address, options) =>
        describeMaster(address, {
          tls: options.rootCert ? { rootCert: options.rootCert } : undefined,
          timeoutMs: options.timeoutMs,
        }),
    };
  },
  async setup(ctx, { store, http, state, cluster }) {
    const config = readMasterConfig(ctx.config);
    const tokens = JoinTokens.fromConfig(ctx.config);
    const created = tokens.ensure();
    if (created) {
      ctx.logger.warn(
        `created the agent join token in ${created}: agents join with --token <token> or RUNNER_JOIN_TOKEN (print it with \`runner agent token show\`)`,
      );
    }
    // Whatever holds the join token is masked wherever it would be shown; a rotation is audited.
    const unfollow = tokens.follow((token, rotated) => {
      ctx.redactor.addSecret(token);
      if (rotated) ctx.events.emit('agent.join_token_rotated', { source: tokens.source() });
    });
    // grpc-js and the proto load here, not at import: `runner --help` imports every plugin's entry.
    const { AgentMaster } = await import('./master.js');
    const master = new AgentMaster({
      config,
      logger: ctx.logger,
      tokens,
      version: ctx.kernelVersion,
      events: ctx.events,
      store,
      state,
      httpAddress: () => http?.address() ?? null,
    });
    const shared = cluster?.shared
      ? new (await import('./cluster-agents.js')).ClusterAgents(cluster, master, ctx.logger)
      : undefined;
    const unshare = cluster?.shared ? master.shareIdentities(cluster) : undefined;
    ctx.provide(AgentRegistryRef, shared?.registry ?? master.registry);
    ctx.provide(AgentDelegatorRef, shared?.delegator ?? master.delegator);
    // With several masters, a terminal opened here reaches an agent connected to another one.
    ctx.provide(AgentTerminalsRef, shared?.terminals ?? master.terminals);
    const { host, port } = await master.listen();
    shared?.start();
    const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    ctx.logger.info(
      `agents: gRPC listening on ${where}${config.tlsCert ? ' (TLS)' : ' (plaintext: set grpc.tls_cert and grpc.tls_key for TLS)'}`,
      { port },
    );
    return {
      stop: () => {
        unfollow();
        shared?.stop();
        unshare?.();
        return master.close();
      },
    };
  },
});
