import {
  InvalidInputError,
  MASTER_URL_OPTION,
  resourceAction,
  resourceCommand,
  type Agent,
  type AgentMetrics,
  type CommandContext,
  type CommandInput,
  type CommandOption,
  type CommandSpec,
} from '@runner/plugin-sdk';
import {
  deleteAgentsName,
  getAgents,
  getAgentsName,
  getAgentsNameMetrics,
  postAgentsNameRestart,
  postAgentsNameRevoke,
  postAgentsNameStop,
} from './api.js';
import { agentDetail, agentTable, metricsBlock, metricsLine } from './cli/format.js';

type Handler = (input: CommandInput, ctx: CommandContext) => Promise<number | void>;

const installer = (pick: (m: typeof import('./install/install-command.js')) => Handler): Handler => {
  return async (input, ctx) => pick(await import('./install/install-command.js'))(input, ctx);
};

function positiveNumber(flag: string, { integer = false, min = 0 } = {}) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= min || (integer && !Number.isInteger(n))) {
      throw new InvalidInputError(
        `${flag}: "${value}" is not ${integer ? 'a whole number' : 'a number'} greater than ${min}`,
        { field: flag.replace(/^--/, '') },
      );
    }
    return n;
  };
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > 65535) {
    throw new InvalidInputError(`--ssh-port: "${value}" is not a port number (1-65535)`, { field: 'ssh-port' });
  }
  return n;
}

const masterUrl: CommandOption = MASTER_URL_OPTION;
const nameArg = { name: 'name', description: 'agent name', required: true };

const sshOptions = (install: boolean): CommandOption[] => [
  {
    flags: '--ssh-profile <name>',
    description:
      "connect from the master with this SSH profile (its key and pinned host key stay there) instead of this machine's SSH",
  },
  {
    flags: '--ssh-host <host>',
    description: `host to install on${install ? ' (unless --ssh-profile)' : ' (default: as installed)'}`,
  },
  {
    flags: '--ssh-user <user>',
    description: `SSH user${install ? ' (unless --ssh-profile)' : ' (default: as installed)'}`,
  },
  { flags: '--ssh-port <port>', description: 'SSH port (default 22)', parse: port },
  {
    flags: '--ssh-key <file>',
    description: 'private key (default: ssh-agent via SSH_AUTH_SOCK, else ~/.ssh/id_ed25519, id_ecdsa, id_rsa)',
  },
  { flags: '--known-hosts <file>', description: 'known_hosts file to verify against (default ~/.ssh/known_hosts)' },
  {
    flags: '--accept-new-host-key',
    description: 'trust and record the host key of a host seen for the first time (a changed key is always refused)',
  },
  { flags: '--node-path <path>', description: 'Node.js on the remote host (default: node on its PATH)' },
  {
    flags: '--wait <seconds>',
    description: 'how long to wait for the agent to register with the master (default 60)',
    parse: positiveNumber('--wait'),
  },
  masterUrl,
];

/** A call that ended with the master's one-line message (stop, restart). */
const said = (answer: { message: string }) => `${answer.message}\n`;

/**
 * `runner agent ...`. The transport plugin contributes `agent start`, the groups plugin `agent
 * group`; commander merges the contributions under one `agent` command. Each subcommand but the
 * SSH ones (install, update) is a route of api.ts declared as a resource action.
 */
export const agentCommand: CommandSpec = resourceCommand({
  name: 'agent',
  description: 'Agents: list, inspect, control, install and update',
  actions: [
    resourceAction(getAgents, {
      name: 'list',
      aliases: ['ls'],
      description: 'list the agents the master knows',
      rows: 'agents',
      watch: true,
      text: (result, input) => {
        if (result.total === 0) {
          const filtered = ['status', 'name', 'label', 'group'].some((k) => input.options[k] !== undefined);
          return filtered ? 'no agent matches\n' : 'no agents registered (install one with runner agent install)\n';
        }
        const more =
          result.agents.length < result.total
            ? `(${result.agents.length} of ${result.total} shown; use --limit and --offset for more)\n`
            : '';
        return agentTable(result.agents as Agent[]) + more;
      },
    }),
    resourceAction(getAgentsName, {
      name: 'get',
      description: "an agent's details",
      watch: true,
      text: (agent) => agentDetail(agent as Agent),
    }),
    resourceAction(getAgentsNameMetrics, {
      name: 'metrics',
      description: "an agent's CPU, memory, disk, network and process counts",
      // Not on a terminal, --watch prints one line per sample (logs, pipes).
      watch: { intervalSeconds: 5, line: (m) => metricsLine(m as AgentMetrics) },
      text: (metrics, input) => metricsBlock(input.args.name, metrics as AgentMetrics),
    }),
    resourceAction(getAgentsName, {
      name: 'modules',
      description: 'the Lua modules an agent offers',
      text: (agent) => {
        const modules = [...(agent.modules ?? [])].sort();
        return modules.length === 0 ? `agent ${agent.name} reports no Lua modules\n` : `${modules.join('\n')}\n`;
      },
    }),
    resourceAction(postAgentsNameStop, {
      name: 'stop',
      description: 'ask an agent process to stop (a systemd unit then stays stopped)',
      text: said,
    }),
    resourceAction(postAgentsNameRestart, {
      name: 'restart',
      description: 'ask an agent process to restart; it registers again',
      text: said,
    }),
    resourceAction(deleteAgentsName, {
      name: 'remove',
      aliases: ['rm'],
      description: 'forget an agent and its credential on the master (the join token can enrol the name again)',
      text: (_answer, input) =>
        `agent ${input.args.name} and its credential removed from the master (the join token can enrol the name again)\n`,
    }),
    resourceAction(postAgentsNameRevoke, {
      name: 'revoke',
      description:
        "revoke an agent's credential: its session closes and it cannot reconnect (remove then frees the name for enrolment)",
      text: (agent) =>
        `agent ${agent.name}: credential revoked at ${agent.revoked_at ?? 'now'}; its session is closed and it cannot reconnect (\`runner agent remove ${agent.name}\` frees the name for the join token)\n`,
    }),
  ],
  subcommands: [
    {
      name: 'install',
      description:
        'install an agent on a host over SSH: check it, upload this runner, set up a systemd unit (or nohup), start it, wait for it to register',
      arguments: [nameArg],
      options: [
        ...sshOptions(true),
        { flags: '--master <host:port>', description: "the master's gRPC address as the agent host reaches it" },
        {
          flags: '--token <token>',
          description:
            'join token the agent presents to the master (default: config agent.join_token, RUNNER_JOIN_TOKEN)',
        },
        {
          flags: '--remote-dir <dir>',
          description: 'where to install (default /opt/runner-agent/<name> as root, else ~/.runner-agent/<name>)',
        },
        {
          flags: '--master-tls-cert <file>',
          description: "the master's TLS certificate (its --tls-cert), copied to the agent host for the agent to trust",
        },
        {
          flags: '--insecure',
          description:
            'let the agent connect without TLS to a master that is not on its host (its credential crosses the network in clear)',
        },
        { flags: '--force', description: 'install over an existing installation of this agent' },
      ],
      run: installer((m) => m.installCommand),
    },
    {
      name: 'update',
      description: 'push this runner version to an installed agent and restart it',
      arguments: [nameArg],
      options: [
        ...sshOptions(false),
        { flags: '--master <host:port>', description: 'change the master the agent connects to' },
        { flags: '--token <token>', description: 'change the join token' },
        { flags: '--master-tls-cert <file>', description: "change the master's TLS certificate the agent trusts" },
        { flags: '--remote-dir <dir>', description: 'where the agent is installed (default: as installed)' },
      ],
      run: installer((m) => m.updateCommand),
    },
  ],
});
