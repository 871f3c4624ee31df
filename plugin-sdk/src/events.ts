/**
 * The domain events carried by the kernel's bus (service.md section 6). Plugins add their own
 * events by declaration merging:
 *
 * ```ts
 * declare module '@runner/plugin-sdk' {
 *   interface RunnerEvents { 'backup.finished': { path: string } }
 * }
 * ```
 */
export interface RunnerEvents {
  'workflow.started': WorkflowEventPayload;
  'workflow.completed': WorkflowEventPayload;
  'workflow.failed': WorkflowEventPayload;
  'task.started': TaskEventPayload;
  'task.completed': TaskEventPayload;
  'task.failed': TaskEventPayload;
  'agent.connected': AgentEventPayload;
  'agent.disconnected': AgentEventPayload;
  /**
   * A connected agent's status changed by what its heartbeat says: `warning` (a resource above its
   * threshold), `error` (the agent reports one), or back to `online`. Going offline and coming
   * back are `agent.disconnected` and `agent.connected`.
   */
  'agent.status_changed': AgentEventPayload & { previous_status: string; reason: string };
  /** The join token enrolled a new agent: the master issued it its own credential (audited). */
  'agent.enrolled': AgentEventPayload;
  /** The master found a join token other than the one it used before (`runner agent token create --force`; audited). */
  'agent.join_token_rotated': { source: string };
  /** A terminal session opened (terminal plugin; audited): `target` is `agent:<name>` or `ssh:<profile>`. */
  'terminal.opened': { id: string; target: string; user: string };
  /** A terminal session ended: the shell exited, its user closed it or was revoked, or nobody attached (audited). */
  'terminal.closed': { id: string; target: string; user: string; reason: string };
  /** A GitOps sync applied a commit: flows, hooks and schedules changed together (gitops plugin; audited). */
  'gitops.synced': GitOpsSyncPayload & {
    previous_commit: string | null;
    flows: number;
    hooks: number;
    schedules: number;
  };
  /** A GitOps sync failed and changed nothing: `reason` says why (gitops plugin; audited). */
  'gitops.sync_failed': GitOpsSyncPayload & { reason: string };
  /** Every plugin is set up; the profile is serving. */
  'kernel.ready': { profile: string; plugins: string[] };
  /** The kernel began to stop. */
  'kernel.stopping': { profile: string; reason: string };
}

/** Payload of `workflow.*` (service.md section 6). */
export interface WorkflowEventPayload {
  workflow_name: string;
  run_id: string;
  /** The stack (environment) the run uses; absent when it names none (hooks of a stack fire on its runs only). */
  stack?: string;
  status: string;
  /** Seconds. */
  duration: number;
  /** Unix seconds. */
  started_at: number;
  /** Unix seconds; 0 while running. */
  completed_at: number;
}

/** What every `gitops.*` event says of the sync. */
export interface GitOpsSyncPayload {
  /** The commit synced; null when the sync failed before it read the repository. */
  commit: string | null;
  /** Who asked: a user, `interval` or `webhook`. */
  by: string;
  /** The master that ran it. */
  master: string;
}

/** Payload of `task.*` (workflow-language.md, Events). */
export interface TaskEventPayload {
  workflow_name: string;
  run_id: string;
  /** The run's stack, as in WorkflowEventPayload. */
  stack?: string;
  task_name: string;
  /** Agent name, or "localhost" for a local task. */
  agent: string;
  status: string;
  attempt: number;
  /** Seconds. */
  duration: number;
  error?: string;
}

/** Payload of `agent.*` (service.md section 6). */
export interface AgentEventPayload {
  agent_name: string;
  /** `host:port`. */
  address: string;
  status: string;
}

/** The `stack` field of a run's events: the run's stack, or nothing when it names none. */
export function stackOf(run: { stack?: string | null }): { stack?: string } {
  return run.stack ? { stack: run.stack } : {};
}

export type EventType = keyof RunnerEvents & string;

/** One event as delivered to subscribers. */
export interface BusEvent<K extends EventType = EventType> {
  /** Unique and sortable by emission order (time, then a counter); stable across the process. */
  id: string;
  type: K;
  /** Milliseconds since the Unix epoch, taken when the event was emitted. */
  timestamp: number;
  data: RunnerEvents[K];
}

/**
 * The typed event bus. Delivery is synchronous and in subscription order; a subscriber that throws
 * is logged with its plugin's id and never stops delivery to the others.
 */
export interface EventBus {
  emit<K extends EventType>(type: K, data: RunnerEvents[K]): void;
  /** Returns a function that removes the subscription. */
  on<K extends EventType>(type: K, handler: (event: BusEvent<K>) => void): () => void;
  /** Every event, whatever its type (the WebSocket hub, metrics, audit). */
  onAny(handler: (event: BusEvent) => void): () => void;
}
