import {
  InvalidInputError,
  MASTER_URL_OPTION,
  type CommandInput,
  type CommandOption,
  type CommandSpec,
} from '@runner/plugin-sdk';
import type { CommandContext } from '@runner/plugin-sdk';

type Handler = (input: CommandInput, ctx: CommandContext) => Promise<number | void>;

// Handlers load on use: `runner --help` imports every plugin's entry and reads this tree only.
const cli = (pick: (m: typeof import('./cli/agent-commands.js')) => Handler): Handler => {
  return async (input, ctx) => pick(await import('./cli/agent-commands.js'))(input, ctx);
};
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
const output: CommandOption = {
  flags: '--output <format>',
  description: 'text or json',
  choices: ['text', 'json'],
  default: 'text',
};
const nameArg = { name: 'name', description: 'agent name', required: true };

const sshOptions = (required: boolean): CommandOption[] => [
  { flags: '--ssh-host <host>', description: `host to install on${required ? '' : ' (default: as installed)'}` },
  { flags: '--ssh-user <user>', description: `SSH user${required ? '' : ' (default: as installed)'}` },
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

/**
 * `runner agent ...`. The transport plugin contributes `agent start`; commander merges both
 * contributions under one `agent` command.
 */
export const agentCommand: CommandSpec = {
  name: 'agent',
  description: 'Agents: list, inspect, control, install and update',
  subcommands: [
    {
      name: 'list',
      aliases: ['ls'],
      description: 'list the agents the master knows',
      options: [
        { flags: '--status <status>', description: 'online, offline, warning or error (comma-separated)' },
        { flags: '--name <text>', description: 'names containing this text' },
        { flags: '--label <key=value>', description: 'agents with this label (key=value or key; comma-separated)' },
        { flags: '--group <name>', description: 'members of this agent group (runner agent group list)' },
        {
          flags: '--limit <n>',
          description: 'at most n agents (default 100)',
          parse: positiveNumber('--limit', { integer: true }),
        },
        { flags: '--offset <n>', description: 'skip the first n agents' },
        output,
        masterUrl,
      ],
      run: cli((m) => m.listCommand),
    },
    {
      name: 'get',
      description: "an agent's details",
      arguments: [nameArg],
      options: [output, masterUrl],
      run: cli((m) => m.getCommand),
    },
    {
      name: 'metrics',
      description: "an agent's CPU, memory, disk, network and process counts",
      arguments: [nameArg],
      options: [
        { flags: '-w, --watch', description: 'refresh until Ctrl-C (one line per sample when not on a terminal)' },
        {
          flags: '--interval <seconds>',
          description: 'seconds between samples with --watch (default 5)',
          parse: positiveNumber('--interval'),
        },
        {
          flags: '--count <n>',
          description: 'stop after n samples with --watch',
          parse: positiveNumber('--count', { integer: true }),
        },
        output,
        masterUrl,
      ],
      run: cli((m) => m.metricsCommand),
    },
    {
      name: 'modules',
      description: 'the Lua modules an agent offers',
      arguments: [nameArg],
      options: [output, masterUrl],
      run: cli((m) => m.modulesCommand),
    },
    {
      name: 'stop',
      description: 'ask an agent process to stop (a systemd unit then stays stopped)',
      arguments: [nameArg],
      options: [masterUrl],
      run: cli((m) => m.stopCommand),
    },
    {
      name: 'restart',
      description: 'ask an agent process to restart; it registers again',
      arguments: [nameArg],
      options: [masterUrl],
      run: cli((m) => m.restartCommand),
    },
    {
      name: 'remove',
      aliases: ['rm'],
      description: 'forget an agent and its credential on the master (the join token can enrol the name again)',
      arguments: [nameArg],
      options: [masterUrl],
      run: cli((m) => m.removeCommand),
    },
    {
      name: 'revoke',
      description:
        "revoke an agent's credential: its session closes and it cannot reconnect (remove then frees the name for enrolment)",
      arguments: [nameArg],
      options: [masterUrl],
      run: cli((m) => m.revokeCommand),
    },
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
};
