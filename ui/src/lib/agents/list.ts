import { api, data } from '$lib/api/client';
import type { Agent, AgentList, StatusFilter } from './types';

/**
 * The agents the list pages show (up to 1000): the URL's search and group filters, asked of the
 * master. The status filter is applied on the page (`matchesStatus`), so that each filter button
 * can show how many agents it holds.
 */
export function listAgents(name: string, group: string): Promise<AgentList> {
  return data(
    api.GET('/api/v1/agents', {
      params: { query: { limit: '1000', name: name || undefined, group: group || undefined } },
    }),
  );
}

/** Connected to the master: `warning` and `error` are states of a connected agent, not of an absent one. */
export function isConnected(agent: Pick<Agent, 'status'>): boolean {
  return agent.status !== 'offline';
}

/**
 * Whether an agent is in a status filter: Online is every connected agent (a warning is a badge on
 * it, not a reason to hide it), Warning (resources above 80%) and Error are subsets of Online.
 */
export function matchesStatus(agent: Pick<Agent, 'status'>, filter: StatusFilter): boolean {
  if (filter === 'all') return true;
  if (filter === 'online') return isConnected(agent);
  return agent.status === filter;
}

/** How many of `agents` each filter holds. */
export function statusCounts(
  agents: Pick<Agent, 'status'>[],
  filters: readonly StatusFilter[],
): Map<StatusFilter, number> {
  return new Map(filters.map((f) => [f, agents.filter((a) => matchesStatus(a, f)).length]));
}
