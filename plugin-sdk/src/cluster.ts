import { createServiceRef } from './service-ref.js';

/** A master sharing the store, as its heartbeat row says. */
export interface MasterInfo {
  id: string;
  /** Where it serves HTTP (`host:port`), or `(starting)` before it listens. */
  address: string;
  /** ISO 8601. */
  startedAt: string;
  /** Its last heartbeat (ISO 8601). */
  lastSeenAt: string;
}

/** What another master sent: its id and the message. */
export type ClusterListener<T = unknown> = (message: T, from: string) => void;

/**
 * The masters sharing one store (plugins/store/README.md, "Several masters"). On the embedded
 * store there is one master (`shared` false): nothing is sent, every request is answered here.
 * On PostgreSQL each master has a heartbeat row; one silent for `cluster.lease_timeout` is dead,
 * and exactly one survivor (a claim in the database) is told through `onMasterLost`.
 */
export interface Cluster {
  /** This master's id: the owner of the runs it executes, unique per process start. */
  readonly masterId: string;
  /** True when other masters may share the store (PostgreSQL). */
  readonly shared: boolean;
  /** The live masters (heartbeat within the lease timeout), this one included. */
  masters(): Promise<MasterInfo[]>;
  /** Whether that master is alive now (its heartbeat row is fresh). */
  isAlive(masterId: string): Promise<boolean>;
  /**
   * Called on the one master that claimed a dead master (in the database: once across all), at
   * start for masters found dead and whenever one is seen dead. The claim is final: what the
   * dead master owned is this master's to end.
   */
  onMasterLost(handler: (master: MasterInfo) => Promise<void> | void): () => void;
  /**
   * Sends `message` (JSON) on `topic` to the other masters, or only to `to`; messages of one turn
   * of the event loop go together, in order. A no-op when the store is not shared.
   */
  publish(topic: string, message: unknown, options?: { to?: string }): void;
  /** Hears messages other masters publish on `topic` (never this master's own). */
  subscribe<T = unknown>(topic: string, listener: ClusterListener<T>): () => void;
  /** Answers requests of `kind` (`request` from another master); one handler per kind. */
  handle<T = unknown, R = unknown>(kind: string, handler: (payload: T, from: string) => Promise<R> | R): () => void;
  /**
   * Asks master `to` (its handler of `kind`) and resolves with its answer; rejects with the
   * handler's error, or with 503 `master_unavailable` naming the master when it does not answer
   * within `timeoutMs` (default 10 s) or is not alive.
   */
  request<R = unknown>(to: string, kind: string, payload: unknown, options?: { timeoutMs?: number }): Promise<R>;
}

export const ClusterRef = createServiceRef<Cluster>({
  id: 'cluster',
  description: 'the masters sharing the store: heartbeats, takeover of a dead master, messages between masters',
});
