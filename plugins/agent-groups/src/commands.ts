import { MASTER_URL_OPTION, type CommandContext, type CommandInput, type CommandSpec } from '@runner/plugin-sdk';

type Handler = (input: CommandInput, ctx: CommandContext) => Promise<number | void>;

// Handlers load on use: `runner --help` imports every plugin's entry and reads this tree only.
const cli = (pick: (m: typeof import('./cli.js')) => Handler): Handler => {
  return async (input, ctx) => pick(await import('./cli.js'))(input, ctx);
};

const output = {
  flags: '-o, --output <format>',
  description: 'text or json',
  choices: ['text', 'json'],
  default: 'text',
};
const groupArg = { name: 'group', description: 'group name', required: true };
const agentsArg = (required: boolean) => ({
  name: 'agents',
  description: 'agent names (an agent need not be connected)',
  required,
  variadic: true,
});

/**
 * `runner agent group ...`, merged under the `agent` command the agents API and the transport
 * also contribute to. Every subcommand calls the master's REST API through the SDK's client.
 */
export const agentGroupCommand: CommandSpec = {
  name: 'agent',
  description: 'Agents: list, inspect, control, install and update',
  subcommands: [
    {
      name: 'group',
      description: 'named groups of agents: delegate_to targets (group:<name>) and agent filters',
      subcommands: [
        {
          name: 'list',
          aliases: ['ls'],
          description: 'list the agent groups',
          options: [output, MASTER_URL_OPTION],
          run: cli((m) => m.listGroups),
        },
        {
          name: 'show',
          description: "a group's description and members, with each member's status",
          arguments: [groupArg],
          options: [output, MASTER_URL_OPTION],
          run: cli((m) => m.showGroup),
        },
        {
          name: 'create',
          description: 'create a group, optionally with its first members',
          arguments: [groupArg, agentsArg(false)],
          options: [
            { flags: '-d, --description <text>', description: 'what the group is for' },
            output,
            MASTER_URL_OPTION,
          ],
          run: cli((m) => m.createGroup),
        },
        {
          name: 'add',
          description: 'add agents to a group',
          arguments: [groupArg, agentsArg(true)],
          options: [output, MASTER_URL_OPTION],
          run: cli((m) => m.addMembers),
        },
        {
          name: 'remove',
          aliases: ['rm'],
          description: 'take agents out of a group',
          arguments: [groupArg, agentsArg(true)],
          options: [output, MASTER_URL_OPTION],
          run: cli((m) => m.removeMembers),
        },
        {
          name: 'delete',
          description: 'delete a group (its agents are not touched)',
          arguments: [groupArg],
          options: [MASTER_URL_OPTION],
          run: cli((m) => m.deleteGroup),
        },
      ],
    },
  ],
};
