import {
  connectMaster,
  formatTable,
  type Agent,
  type AgentGroup,
  type CommandContext,
  type CommandInput,
} from '@runner/plugin-sdk';

const path = (name: string, rest = '') => `/agent-groups/${encodeURIComponent(name)}${rest}`;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const count = (n: number) => `${n} agent${n === 1 ? '' : 's'}`;

export async function listGroups({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const result = await master.call<{ groups: AgentGroup[]; total: number }>('GET', '/agent-groups');
  if (options.output === 'json') ctx.stdout.write(json(result));
  else if (result.total === 0)
    ctx.stdout.write('no agent groups (create one with runner agent group create <name> [agents...])\n');
  else
    ctx.stdout.write(
      formatTable(
        ['NAME', 'MEMBERS', 'DESCRIPTION'],
        result.groups.map((g) => [g.name, String(g.members.length), g.description]),
      ),
    );
  return 0;
}

export async function showGroup({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const group = await master.call<AgentGroup>('GET', path(args[0]));
  if (options.output === 'json') {
    ctx.stdout.write(json(group));
    return 0;
  }
  // Members the master has never seen (or has forgotten) are still members: shown as such.
  const { agents } = await master.call<{ agents: Agent[] }>(
    'GET',
    `/agents?group=${encodeURIComponent(group.name)}&limit=1000`,
  );
  const status = new Map(agents.map((a) => [a.name, a.status]));
  ctx.stdout.write(`name:        ${group.name}\ndescription: ${group.description || '-'}\n`);
  ctx.stdout.write(`created:     ${group.created_at}\nupdated:     ${group.updated_at}\n`);
  ctx.stdout.write(`members:     ${count(group.members.length)}\n`);
  if (group.members.length > 0)
    ctx.stdout.write(
      formatTable(
        ['AGENT', 'STATUS'],
        group.members.map((m) => [m, status.get(m) ?? 'not registered']),
      ).replace(/^/gm, '  '),
    );
  return 0;
}

export async function createGroup({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const [name, ...members] = args;
  const group = await master.call<AgentGroup>('POST', '/agent-groups', {
    body: {
      name,
      ...(options.description === undefined ? {} : { description: String(options.description) }),
      members,
    },
  });
  ctx.stdout.write(
    options.output === 'json' ? json(group) : `agent group ${group.name} created with ${count(group.members.length)}\n`,
  );
  return 0;
}

export async function addMembers({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const [name, ...agents] = args;
  const group = await master.call<AgentGroup>('POST', path(name, '/members'), { body: { agents } });
  ctx.stdout.write(
    options.output === 'json' ? json(group) : `agent group ${group.name} now has ${count(group.members.length)}\n`,
  );
  return 0;
}

export async function removeMembers({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const [name, ...agents] = args;
  const query = new URLSearchParams({ agents: agents.join(',') });
  const group = await master.call<AgentGroup>('DELETE', path(name, `/members?${query}`));
  ctx.stdout.write(
    options.output === 'json' ? json(group) : `agent group ${group.name} now has ${count(group.members.length)}\n`,
  );
  return 0;
}

export async function deleteGroup({ args, options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  await master.call('DELETE', path(args[0]));
  ctx.stdout.write(`agent group ${args[0]} deleted\n`);
  return 0;
}
