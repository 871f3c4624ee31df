import {
  AGENT_NAME_PATTERN,
  AGENT_NAME_RULE,
  ConflictError,
  didYouMean,
  InvalidInputError,
  NotFoundError,
  type AgentGroup,
  type AgentGroups,
  type Migration,
  type Store,
} from '@runner/plugin-sdk';

export const GROUP_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'agent groups and their members',
    sql: `CREATE TABLE agent_groups (
      name TEXT PRIMARY KEY,
      description TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE agent_group_members (
      group_name TEXT NOT NULL REFERENCES agent_groups(name) ON DELETE CASCADE,
      agent TEXT NOT NULL,
      PRIMARY KEY (group_name, agent)
    );`,
  },
];

/** Longest description kept: a line or two for people, not a document. */
export const MAX_DESCRIPTION = 500;
/** Most members a group holds: well above any fleet the master serves, small enough to list in one answer. */
export const MAX_MEMBERS = 10_000;

export type GroupChange = 'created' | 'updated' | 'deleted';

interface GroupRow {
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}

/** Checks a group or member name by the agent-name rule; `field` says where it came from. */
export function checkName(kind: 'group' | 'agent', name: unknown, field: string): string {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name)) {
    throw new InvalidInputError(`${field}: ${kind} name ${JSON.stringify(name)} is not valid: use ${AGENT_NAME_RULE}`, {
      field,
    });
  }
  return name;
}

function checkDescription(description: unknown, field: string): string {
  if (typeof description !== 'string' || description.length > MAX_DESCRIPTION) {
    throw new InvalidInputError(`${field}: the description must be text of at most ${MAX_DESCRIPTION} characters`, {
      field,
    });
  }
  return description.trim();
}

/** Distinct, valid member names, sorted; `field` names the list in errors (`members[2]`). */
function checkMembers(agents: readonly unknown[], field: string): string[] {
  const names = new Set(agents.map((agent, i) => checkName('agent', agent, `${field}[${i}]`)));
  if (names.size > MAX_MEMBERS)
    throw new InvalidInputError(`${field}: a group holds at most ${MAX_MEMBERS} agents`, { field });
  return [...names].sort();
}

/**
 * Agent groups in the master's store. Reads answer from a copy in memory, loaded at open and
 * read again after each write of this process (the engine expands `group:` targets synchronously
 * as tasks render); every write is one transaction, resolved once durable. Members are names, not references to the
 * agents table: a group keeps an agent that is offline, removed or not yet registered.
 */
export class AgentGroupStore implements AgentGroups {
  constructor(
    private readonly store: Store,
    /** Told after each change is durable (the plugin broadcasts `agent_group_update`). */
    private readonly onChange: (group: string, change: GroupChange, members: number) => void = () => {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The groups by name, as stored; sorted when listed. */
  private readonly groups = new Map<string, AgentGroup>();

  async open(): Promise<void> {
    await this.store.migrate('agent-groups', GROUP_MIGRATIONS);
    const members = new Map<string, string[]>();
    for (const row of await this.store.all<{ group_name: string; agent: string }>(
      'SELECT group_name, agent FROM agent_group_members ORDER BY group_name, agent',
    )) {
      const list = members.get(row.group_name) ?? [];
      list.push(row.agent);
      members.set(row.group_name, list);
    }
    for (const row of await this.store.all<GroupRow>('SELECT * FROM agent_groups ORDER BY name'))
      this.groups.set(row.name, { ...row, members: members.get(row.name) ?? [] });
  }

  /** Reads one group back from the store after a write (gone when deleted). */
  private async load(name: string): Promise<AgentGroup | undefined> {
    const row = await this.store.get<GroupRow>('SELECT * FROM agent_groups WHERE name = ?', [name]);
    if (!row) {
      this.groups.delete(name);
      return undefined;
    }
    const members = (
      await this.store.all<{ agent: string }>(
        'SELECT agent FROM agent_group_members WHERE group_name = ? ORDER BY agent',
        [name],
      )
    ).map((m) => m.agent);
    const group = { ...row, members };
    this.groups.set(name, group);
    return group;
  }

  /** Reads a group again after another master sharing the store changed it. */
  async refresh(name: string): Promise<void> {
    await this.load(name);
  }

  list(): AgentGroup[] {
    return [...this.groups.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(name: string): AgentGroup | undefined {
    return this.groups.get(name);
  }

  /** The group, or a NotFoundError naming it with the nearest existing name. */
  require(name: string): AgentGroup {
    const group = this.get(name);
    if (group) return group;
    const names = this.names();
    const hint = names.length === 0 ? 'no agent group exists yet' : `groups: ${names.join(', ')}`;
    throw new NotFoundError(`agent group "${name}" does not exist${didYouMean(name, names)} (${hint})`, {
      details: { group: name },
    });
  }

  names(): string[] {
    return this.list().map((group) => group.name);
  }

  async create(group: { name: string; description?: string; members?: readonly string[] }): Promise<AgentGroup> {
    const name = checkName('group', group.name, 'name');
    const description = checkDescription(group.description ?? '', 'description');
    const members = checkMembers(group.members ?? [], 'members');
    if (this.get(name)) throw new ConflictError(`agent group "${name}" already exists`, { details: { group: name } });
    const at = this.now().toISOString();
    await this.store.transaction([
      {
        sql: 'INSERT INTO agent_groups (name, description, created_at, updated_at) VALUES (?, ?, ?, ?)',
        params: [name, description, at, at],
      },
      ...members.map((agent) => ({
        sql: 'INSERT INTO agent_group_members (group_name, agent) VALUES (?, ?)',
        params: [name, agent],
      })),
    ]);
    return this.changed(name, 'created');
  }

  async update(name: string, change: { description?: string; members?: readonly string[] }): Promise<AgentGroup> {
    this.require(name);
    const description =
      change.description === undefined ? undefined : checkDescription(change.description, 'description');
    const members = change.members === undefined ? undefined : checkMembers(change.members, 'members');
    await this.store.transaction([
      ...(description === undefined
        ? []
        : [{ sql: 'UPDATE agent_groups SET description = ? WHERE name = ?', params: [description, name] }]),
      ...(members === undefined
        ? []
        : [
            { sql: 'DELETE FROM agent_group_members WHERE group_name = ?', params: [name] },
            ...members.map((agent) => ({
              sql: 'INSERT INTO agent_group_members (group_name, agent) VALUES (?, ?)',
              params: [name, agent],
            })),
          ]),
      this.touch(name),
    ]);
    return this.changed(name, 'updated');
  }

  async addMembers(name: string, agents: readonly string[]): Promise<AgentGroup> {
    const group = this.require(name);
    const added = checkMembers(agents, 'agents').filter((agent) => !group.members.includes(agent));
    if (group.members.length + added.length > MAX_MEMBERS)
      throw new InvalidInputError(`agents: a group holds at most ${MAX_MEMBERS} agents`, { field: 'agents' });
    if (added.length === 0) return group;
    await this.store.transaction([
      // DO NOTHING: two requests adding the same agent at once both succeed.
      ...added.map((agent) => ({
        sql: 'INSERT INTO agent_group_members (group_name, agent) VALUES (?, ?) ON CONFLICT DO NOTHING',
        params: [name, agent],
      })),
      this.touch(name),
    ]);
    return this.changed(name, 'updated');
  }

  async removeMembers(name: string, agents: readonly string[]): Promise<AgentGroup> {
    const group = this.require(name);
    const removed = checkMembers(agents, 'agents').filter((agent) => group.members.includes(agent));
    if (removed.length === 0) return group;
    await this.store.transaction([
      ...removed.map((agent) => ({
        sql: 'DELETE FROM agent_group_members WHERE group_name = ? AND agent = ?',
        params: [name, agent],
      })),
      this.touch(name),
    ]);
    return this.changed(name, 'updated');
  }

  async delete(name: string): Promise<void> {
    this.require(name);
    // Members first: the journal replays statements as written, whatever foreign_keys says.
    await this.store.transaction([
      { sql: 'DELETE FROM agent_group_members WHERE group_name = ?', params: [name] },
      { sql: 'DELETE FROM agent_groups WHERE name = ?', params: [name] },
    ]);
    await this.load(name);
    this.onChange(name, 'deleted', 0);
  }

  private async changed(name: string, change: GroupChange): Promise<AgentGroup> {
    const group = await this.load(name);
    if (!group) return this.require(name);
    this.onChange(name, change, group.members.length);
    return group;
  }

  private touch(name: string) {
    return { sql: 'UPDATE agent_groups SET updated_at = ? WHERE name = ?', params: [this.now().toISOString(), name] };
  }
}
