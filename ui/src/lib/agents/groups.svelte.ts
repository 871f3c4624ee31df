import { api, data } from '$lib/api/client';
import { live } from '$lib/live/socket.svelte';
import type { AgentGroup } from './types';

/**
 * The master's agent groups for a page: loaded once, then again on every `agent_group_update`
 * (a group created, changed or deleted, here or in another tab or by the CLI).
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

  /** A group as an answer gave it (undefined: deleted), before its `agent_group_update` arrives. */
  put(name: string, group: AgentGroup | undefined): void {
    this.list = group ? this.list.map((g) => (g.name === name ? group : g)) : this.list.filter((g) => g.name !== name);
  }

  /** Loads now and on every change until the returned function is called (an $effect's cleanup). */
  follow(): () => void {
    void this.load();
    return live.on('agent_group_update', () => void this.load());
  }
}
