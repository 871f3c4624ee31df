import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:os';
import { RunnerError, type CommandContext, type CommandSpec } from '@runner/plugin-sdk';
import { checkAgentName, parseLabels } from './config.js';
import { AgentProcessRef, type AgentEnd } from './process.js';

/** Exit code of a restart left to the service manager (EX_TEMPFAIL; systemd's Restart=on-failure acts on it). */
export const RESTART_EXIT_CODE = 75;

/**
 * Set in the agent process a `runner agent start` started to restart it: the pid of that
 * supervisor. Not a `RUNNER_*` name, which would be read as a config key.
 */
export const SUPERVISOR_ENV = '_RUNNER_AGENT_SUPERVISOR';

/**
 * How the agent restarts when the master asks: `exec` starts a new process of itself and stays,
 * waiting for it (the process the shell or script started keeps running, so nothing is left
 * detached); `exit` exits with code 75 for a service manager to start it again. `auto` (the
 * default) exits under systemd (which sets INVOCATION_ID, and would stop a process its unit did not
 * start) and re-executes otherwise. A process already started by such a supervisor exits with 75
 * for it: restarts do not nest.
 */
export function restartMode(configured: 'auto' | 'exec' | 'exit', env: NodeJS.ProcessEnv): 'exec' | 'exit' {
  if (env[SUPERVISOR_ENV]) return 'exit';
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
            'the master to connect to, or several sharing one store, comma-separated (a:50053,b:50053): the agent goes to the next when its master dies (default $RUNNER_MASTER_ADDR, config master.address; port 50053 when omitted)',
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
  // Noted as it arrives, past the race: a SIGTERM while a restart stops the kernel must not start
  // the new process (a supervisor killed after it would leave that process running, unstopped).
  let signalled = false;
  const noteSignal = () => (signalled = true);
  process.once('SIGINT', noteSignal).once('SIGTERM', noteSignal);
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
      if (signalled) return 0;
      if (mode === 'exit') {
        const supervisor = process.env[SUPERVISOR_ENV];
        ctx.stdout.write(
          `runner agent ${agent.name}: exiting with code ${RESTART_EXIT_CODE} for ${supervisor ? `runner agent (pid ${supervisor})` : 'the service manager'} to restart it\n`,
        );
        return RESTART_EXIT_CODE;
      }
      return superviseRestarts(agent.name, ctx);
    }
    case 'refused':
      throw new RunnerError('agent_refused', end.message);
    case 'gave-up':
      throw new RunnerError('master_unreachable', end.message);
  }
}

/**
 * Runs the agent again in a new process (new code after `runner agent update`) and waits for it,
 * so the process the user or a script started stays the agent's: its exit code is the agent's,
 * SIGINT and SIGTERM stop it, and nothing is left running detached. Each later restart asks this
 * process again (the child exits with 75), so restarts do not nest processes.
 */
async function superviseRestarts(name: string, ctx: CommandContext): Promise<number> {
  let child: ChildProcess | undefined;
  // The child has a process group of its own: Ctrl-C at the terminal reaches this process, which
  // passes it on once (a second signal would make the agent's kernel exit at once).
  const forward = (signal: NodeJS.Signals) => child?.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  try {
    for (;;) {
      child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
        stdio: 'inherit',
        env: { ...process.env, [SUPERVISOR_ENV]: String(process.pid) },
        detached: true,
      });
      ctx.stdout.write(`runner agent ${name}: restarting as pid ${child.pid} (pid ${process.pid} waits for it)\n`);
      const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      if (code === RESTART_EXIT_CODE) continue;
      return code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
    }
  } finally {
    process.off('SIGINT', forward).off('SIGTERM', forward);
  }
}
