import { spawn } from 'node:child_process';
import { RunnerError, type CommandContext, type CommandSpec } from '@runner/plugin-sdk';
import { checkAgentName, parseLabels } from './config.js';
import { AgentProcessRef, type AgentEnd } from './process.js';

/** Exit code of a restart left to the service manager (EX_TEMPFAIL; systemd's Restart=on-failure acts on it). */
export const RESTART_EXIT_CODE = 75;

/**
 * How the agent restarts when the master asks: `exec` starts a new process of itself and exits;
 * `exit` exits with code 75 for a service manager to start it again. `auto` (the default) exits
 * under systemd (which sets INVOCATION_ID, and would stop a process its unit did not start) and
 * re-executes otherwise.
 */
export function restartMode(configured: 'auto' | 'exec' | 'exit', env: NodeJS.ProcessEnv): 'exec' | 'exit' {
  // The kernel checked the value against the declaration (auto, exec or exit).
  if (configured === 'exec' || configured === 'exit') return configured;
  return env.INVOCATION_ID ? 'exit' : 'exec';
}

/** `runner agent start <name>`: the agent profile, connected to its master until stopped. */
export const agentStartCommand: CommandSpec = {
  name: 'agent',
  description: 'agents: list, inspect and control them, start one, manage the join token',
  subcommands: [
    {
      name: 'start',
      description: 'run this host as an agent: connect to the master, register, take delegated tasks (until Ctrl-C)',
      arguments: [{ name: 'name', description: 'unique agent name (letters, digits, . _ -)', required: true }],
      options: [
        {
          flags: '--master <host:port>',
          description:
            'the master to connect to (default $RUNNER_MASTER_ADDR, config master.address; port 50053 when omitted)',
        },
        {
          flags: '--token <token>',
          description:
            'join token (default $RUNNER_JOIN_TOKEN, config agent.join_token); `runner agent token show` on the master prints it',
        },
        {
          flags: '--master-tls-cert <file>',
          description: "connect with TLS, trusting this PEM certificate (the master's --tls-cert or its CA)",
        },
        {
          flags: '--insecure',
          description:
            'connect without TLS to a master that is not on this host (the credential crosses the network in clear; warned about)',
        },
        {
          flags: '--labels <k=v,...>',
          description: 'labels shown with the agent, readable by conditional delegation (repeatable)',
          parse: (value, previous) => ({ ...(previous as Record<string, string> | undefined), ...parseLabels(value) }),
        },
      ],
      run: ({ args, options }, ctx) => startAgent(args[0], options, ctx),
    },
  ],
};

async function startAgent(name: string, options: Record<string, unknown>, ctx: CommandContext): Promise<number> {
  checkAgentName(name);
  const overrides: Record<string, unknown> = { 'agent.name': name };
  if (options.master !== undefined) overrides['master.address'] = options.master;
  if (options.token !== undefined) overrides['agent.join_token'] = options.token;
  if (options.masterTlsCert !== undefined) overrides['agent.master_tls_cert'] = options.masterTlsCert;
  if (options.insecure === true) overrides['agent.insecure'] = true;
  for (const [key, value] of Object.entries((options.labels as Record<string, string> | undefined) ?? {}))
    overrides[`agent.labels.${key}`] = value;

  const kernel = await ctx.boot('agent', overrides);
  const agent = kernel.get(AgentProcessRef);
  ctx.stdout.write(
    `runner agent ${agent.name} (pid ${process.pid}): connecting to master ${agent.master}; Ctrl-C stops it\n`,
  );
  const end: AgentEnd | { kind: 'signal' } = await Promise.race([
    agent.ended,
    kernel.stopOnSignal().then(() => ({ kind: 'signal' as const })),
  ]);
  switch (end.kind) {
    case 'signal':
    case 'stopped':
      return 0;
    case 'stop-requested':
      ctx.stdout.write(`runner agent ${agent.name}: stopped by the master\n`);
      return 0;
    case 'dismissed':
      ctx.stderr.write(
        `runner: agent ${agent.name}: the master ended the session and asked it not to reconnect: ${end.message}\n`,
      );
      return 0;
    case 'restart': {
      const mode = restartMode(kernel.config.get<'auto' | 'exec' | 'exit'>('agent.restart_mode'), process.env);
      // The old session ends before the new process registers, so the master sees one agent.
      await kernel.stop('restart requested by the master');
      if (mode === 'exit') {
        ctx.stdout.write(
          `runner agent ${agent.name}: exiting with code ${RESTART_EXIT_CODE} for the service manager to restart it\n`,
        );
        return RESTART_EXIT_CODE;
      }
      const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
        stdio: 'inherit',
        env: process.env,
      });
      child.unref();
      ctx.stdout.write(`runner agent ${agent.name}: restarting as pid ${child.pid}\n`);
      return 0;
    }
    case 'refused':
      throw new RunnerError('agent_refused', end.message);
    case 'gave-up':
      throw new RunnerError('master_unreachable', end.message);
  }
}
