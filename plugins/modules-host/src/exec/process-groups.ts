import type { ProcessGroups, StartedProcessGroup } from '@runner/plugin-sdk';

/** The ProcessGroups service: exec.run reports each group it starts for a run, and its end. */
export class ProcessGroupWatch implements ProcessGroups {
  private readonly listeners = new Set<(group: StartedProcessGroup) => (() => void) | void>();

  watch(listener: (group: StartedProcessGroup) => (() => void) | void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** A group started; returns what to call once its leader exited. Listeners' failures stay theirs. */
  started(group: StartedProcessGroup): () => void {
    if (this.listeners.size === 0) return () => {};
    const ends: (() => void)[] = [];
    for (const listener of this.listeners) {
      const end = listener(group);
      if (end) ends.push(end);
    }
    return () => {
      for (const end of ends) end();
    };
  }
}
