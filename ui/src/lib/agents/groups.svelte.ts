import { api, data } from '$lib/api/client';
import type { AgentGroup } from './types';

/**
 * The master's agent groups, loaded once per page that shows them and reloaded after a change
 * (groups change rarely, and only through the API: no live message carries them).
 */
export class AgentGroups {
  list = $state<AgentGroup[]>([]);
  error = $state<unknown>();

  async load(): Promise<void> {
    try {
      this.list = (await data(api.GET('/api/v1/agent-groups'))).groups;
      this.error = undefined;
    } catch (e) {
      this.error = e;
    }
  }
}
