import { createServiceRef } from './service-ref.js';

/** A process group a task of a run started: `exec.run` children lead a group of their own. */
export interface StartedProcessGroup {
  runId: string;
  /** The task's name in the workflow. */
  task: string;
  /** The group's id, which is the pid of the process exec.run started. */
  pgid: number;
}

/**
 * Process groups started by tasks of runs, for whoever must find them again when the process that
 * started them died (the engine records them, and on its next start kills those still running).
 * Provided by the `exec` module on masters and embedded runs.
 */
export interface ProcessGroups {
  /**
   * Calls `listener` as each group starts; the function it returns is called once the group's
   * leader exited. Returns a function that removes the listener.
   */
  watch(listener: (group: StartedProcessGroup) => (() => void) | void): () => void;
}

export const ProcessGroupsRef = createServiceRef<ProcessGroups>({
  id: 'exec.process-groups',
  description: 'process groups started by tasks of runs (exec.run)',
});
