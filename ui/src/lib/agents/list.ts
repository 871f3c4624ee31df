import { api, data } from '$lib/api/client';
import type { AgentList, StatusFilter } from './types';

/** The agents the list pages show (up to 1000): the URL's search, status and group filters. */
export function listAgents(name: string, status: StatusFilter, group: string): Promise<AgentList> {
  return data(
    api.GET('/api/v1/agents', {
      params: {
        query: {
          limit: '1000',
          name: name || undefined,
          status: status === 'all' ? undefined : status,
          group: group || undefined,
        },
      },
    }),
  );
}
