import { createServiceRef } from './service-ref.js';

/**
 * The rule every agent name follows (the agent refuses to start with another; the master refuses
 * to register one). Agent groups use the same rule for their names and members, which is why a
 * `delegate_to` entry with a colon (`group:web`) can never be mistaken for an agent.
 */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** The rule above in words, for error messages. */
export const AGENT_NAME_RULE = 'letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit)';

/** The `delegate_to` name of the master's own host: a task there runs locally, never on an agent. */
export const MASTER_HOST = 'localhost';

/** Names an agent may not take: they mean the master (`localhost`, `master`) or every agent (`all`). */
export const RESERVED_AGENT_NAMES: readonly string[] = Object.freeze([MASTER_HOST, 'master', 'all']);

/**
 * The form two agent names are compared in: lower case, without a trailing dot. `Web-1`, `web-1.`
 * and `web-1` are one name to an operator reading a list, so only one of them may be enrolled.
 */
export function agentNameKey(name: string): string {
  return name.toLowerCase().replace(/\.+$/, '');
}

/** Whether a `delegate_to` entry names the master's own host (`localhost`, in any case, with a trailing dot). */
export function isMasterHost(entry: string): boolean {
  return agentNameKey(entry) === MASTER_HOST;
}

/**
 * How a workflow names a group in `delegate_to` (and `--delegate-to`): `group:web`. Chosen over
 * `@web` because `@` cannot start a plain YAML scalar (it would need quoting, and unquoted it is a
 * parse error far from the cause) and `@` already joins task and agent in unit names (`ship@web-1`).
 */
export const GROUP_TARGET_PREFIX = 'group:';

/** The group name of a `delegate_to` entry such as `group:web`; undefined for an agent name. */
export function groupTarget(entry: string): string | undefined {
  return entry.startsWith(GROUP_TARGET_PREFIX) ? entry.slice(GROUP_TARGET_PREFIX.length) : undefined;
}

/** A named set of agents (issue 11 item 5): a `delegate_to` target and an agents filter. */
export interface AgentGroup {
  name: string;
  description: string;
  /** Agent names, sorted. A member need not be connected, nor registered yet. */
  members: string[];
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC of the last change to the description or the members. */
  updated_at: string;
}

/**
 * The master's agent groups, stored durably. Writes resolve once durable; they reject with an
 * InvalidInputError for a bad name, a NotFoundError (with a did-you-mean) for an unknown group and
 * a ConflictError for a name taken.
 */
export interface AgentGroups {
  list(): AgentGroup[];
  get(name: string): AgentGroup | undefined;
  create(group: { name: string; description?: string; members?: readonly string[] }): Promise<AgentGroup>;
  /** Changes the description and, when given, replaces the members. */
  update(name: string, change: { description?: string; members?: readonly string[] }): Promise<AgentGroup>;
  /** Adds agents (those already members are left as they are). */
  addMembers(name: string, agents: readonly string[]): Promise<AgentGroup>;
  /** Removes agents (names that are not members are ignored). */
  removeMembers(name: string, agents: readonly string[]): Promise<AgentGroup>;
  delete(name: string): Promise<void>;
}

export const AgentGroupsRef = createServiceRef<AgentGroups>({
  id: 'agents.groups',
  description: 'named groups of agents: delegate_to targets and agent filters (agent-groups plugin)',
});
