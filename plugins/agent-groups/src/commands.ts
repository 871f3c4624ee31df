import { formatTable, resourceCommand, type Agent, type AgentGroup, type CommandSpec } from '@runner/plugin-sdk';
import {
  deleteAgentGroupsName,
  deleteAgentGroupsNameMembers,
  getAgentGroups,
  getAgentGroupsName,
  postAgentGroups,
  postAgentGroupsNameMembers,
} from './api.js';

const count = (n: number) => `${n} agent${n === 1 ? '' : 's'}`;
const nowHas = (group: AgentGroup) => `agent group ${group.name} now has ${count(group.members.length)}\n`;

/**
 * `runner agent group ...`, merged under the `agent` command the agents API and the transport
 * also contribute to: each subcommand is one of the plugin's routes (api.ts).
 */
export const agentGroupCommand: CommandSpec = {
  name: 'agent',
  description: 'Agents: list, inspect, control, install and update',
  subcommands: [
    resourceCommand({
      name: 'group',
      description: 'named groups of agents: delegate_to targets (group:<name>) and agent filters',
      actions: [
        {
          name: 'list',
          aliases: ['ls'],
          route: getAgentGroups,
          description: 'list the agent groups',
          rows: 'groups',
          empty: 'no agent groups (create one with runner agent group create <name> [agents...])',
          columns: [
            { header: 'NAME', field: 'name' },
            { header: 'MEMBERS', value: (g) => (g.members as string[]).length },
            { header: 'DESCRIPTION', field: 'description' },
          ],
        },
        {
          name: 'show',
          route: getAgentGroupsName,
          description: "a group's description and members, with each member's status",
          text: showGroup,
        },
        {
          name: 'create',
          route: postAgentGroups,
          description: 'create a group, optionally with its first members',
          positional: ['name'],
          short: { description: '-d' },
          rest: { field: 'members', description: 'agent names (an agent need not be connected)' },
          text: (group: AgentGroup) => `agent group ${group.name} created with ${count(group.members.length)}\n`,
        },
        {
          name: 'add',
          route: postAgentGroupsNameMembers,
          description: 'add agents to a group',
          rest: { field: 'agents', description: 'agent names (an agent need not be connected)', required: true },
          text: nowHas,
        },
        {
          name: 'remove',
          aliases: ['rm'],
          route: deleteAgentGroupsNameMembers,
          description: 'take agents out of a group',
          restQuery: { field: 'agents', description: 'agent names' },
          text: nowHas,
        },
        {
          name: 'delete',
          route: deleteAgentGroupsName,
          text: (_answer: unknown, input) => `agent group ${input.args.name} deleted\n`,
        },
      ],
    }),
  ],
};

/** The group, and each member with its status (a member the master has never seen is still one). */
async function showGroup(
  group: AgentGroup,
  _input: unknown,
  master: { call<T>(method: 'GET', path: string): Promise<T> },
): Promise<string> {
  const { agents } = await master.call<{ agents: Agent[] }>(
    'GET',
    `/agents?group=${encodeURIComponent(group.name)}&limit=1000`,
  );
  const status = new Map(agents.map((a) => [a.name, a.status]));
  let text = `name:        ${group.name}\ndescription: ${group.description || '-'}\n`;
  text += `created:     ${group.created_at}\nupdated:     ${group.updated_at}\n`;
  text += `members:     ${count(group.members.length)}\n`;
  if (group.members.length > 0)
    text += formatTable(
      ['AGENT', 'STATUS'],
      group.members.map((m) => [m, status.get(m) ?? 'not registered']),
    ).replace(/^/gm, '  ');
  return text;
}
