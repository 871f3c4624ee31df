import type { LuaValue } from './lua-module.js';
import { createServiceRef } from './service-ref.js';

/** Where a state key lives (module-state README): every run of a workflow, one task of it, or everyone. */
export const STATE_SCOPES = ['workflow', 'task', 'global'] as const;
export type StateScope = (typeof STATE_SCOPES)[number];

export const STATE_OPERATIONS = ['get', 'keys', 'set', 'changed', 'clear'] as const;
export type StateOperation = (typeof STATE_OPERATIONS)[number];

/** One call of the Lua `state` module, its arguments already read from Lua. */
export interface StateRequest {
  operation: StateOperation;
  scope: StateScope;
  /** Empty for `keys`. */
  key: string;
  /** set and changed: the value; null or undefined clears the key. */
  value?: LuaValue;
}

export interface StateAnswer {
  /** get: the stored value, null when the key has none. */
  value?: LuaValue;
  /** keys: the keys with a value in the scope, sorted. */
  keys?: string[];
  /** set, changed, clear: the stored value differed (in dry-run: would have; nothing is written). */
  changed?: boolean;
}

/** Who asks: the run and task a script runs in decide which workflow and task scopes it reaches. */
export interface StateCaller {
  workflow: string;
  task: string;
  /** Absent outside a run (the REPL). */
  runId?: string;
  dryRun: boolean;
}

/**
 * The state the `state` module reads and writes in this process: the store's on a master or an
 * embedded run; on an agent, the master's, reached over the agent's stream (StateForwarderRef).
 * The master's agent transport serves agents' requests through the same service, so a key has one
 * order of writes whichever process a task runs in. Reads over a store answer at once (not a
 * promise), so a script can read state where Lua cannot wait (a gsub callback, a sort comparator).
 */
export interface StateService {
  perform(request: StateRequest, caller: StateCaller, signal?: AbortSignal): StateAnswer | Promise<StateAnswer>;
}

export const StateServiceRef = createServiceRef<StateService>({
  id: 'state',
  description: 'the durable key/value state of the Lua state module',
});

/**
 * An agent's way to its master's state: provided by the agent side of the transport. The master
 * serves a request only for a task it delegated to this agent and still waits for, and takes the
 * workflow, the task and dry-run from its own record of it: `run` only names which task asks.
 */
export interface StateForwarder {
  forward(request: StateRequest, run: { runId: string; task: string }, signal?: AbortSignal): Promise<StateAnswer>;
}

export const StateForwarderRef = createServiceRef<StateForwarder>({
  id: 'state.forwarder',
  description: "the agent's way to the master's state",
});
