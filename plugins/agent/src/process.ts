import { createServiceRef } from '@runner/plugin-sdk';
import type { AgentOutcome, ClientState } from './client.js';

/** Why `runner agent start` ends: the client's outcome, or the master's Control call. */
export type AgentEnd = AgentOutcome | { kind: 'restart' } | { kind: 'stop-requested' };

/** The running agent, for the `runner agent start` command that booted it. */
export interface AgentProcess {
  readonly name: string;
  readonly master: string;
  /** Resolves when the process should end (it never rejects). */
  readonly ended: Promise<AgentEnd>;
  state(): ClientState;
}

// Its own light module: the plugin's entry imports it, and `runner --help` imports every entry.
export const AgentProcessRef = createServiceRef<AgentProcess>({
  id: 'agent.process',
  description: 'the agent connected to its master (agent profile)',
});
