import { Loader } from '$lib/kit/loader.svelte';
import { live } from '$lib/live/socket.svelte';
import { coalesce } from '$lib/url';
import type { Agent } from './types';

/**
 * The agents a list page shows, read through the kit's Loader and kept live: a status or usage
 * change updates its row in place, a connection or disconnection (and, for a list filtered by
 * group, a change of groups) reads the list again, at most once a second.
 */
export class LiveAgents {
  all = $state<Agent[]>([]);
  readonly list: Loader<Agent[]>;

  constructor(read: () => Promise<Agent[]>) {
    this.list = new Loader(read, (agents) => (this.all = agents));
  }

  /** Call from an `$effect`; returns its cleanup. `filteredByGroup` says whether group changes matter. */
  follow(filteredByGroup: () => boolean): () => void {
    const reload = coalesce(this.list.retry);
    const offs = [
      live.on('agent_update', (m) => {
        const i = this.all.findIndex((a) => a.name === m.data.name);
        if (i < 0) return;
        const status = m.data.status as Agent['status'];
        this.all[i] = { ...this.all[i]!, status, cpu_usage: m.data.cpu_usage, memory_usage: m.data.memory_usage };
      }),
      live.on('agent.connected', reload),
      live.on('agent.disconnected', reload),
      // Members added, taken out or the group deleted elsewhere change the filtered list.
      live.on('agent_group_update', () => {
        if (filteredByGroup()) reload();
      }),
    ];
    return () => {
      offs.forEach((off) => off());
      reload.cancel();
    };
  }
}
