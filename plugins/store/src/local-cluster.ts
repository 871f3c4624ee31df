import { RunnerError, type Cluster, type ClusterListener, type MasterInfo } from '@runner/plugin-sdk';
import { newMasterId } from './pg-cluster.js';

/**
 * The cluster of the embedded store: one master holds the data directory (its lock), so there is
 * nobody to send to, nobody to lose, and every request is answered here. Costs nothing.
 */
export class LocalCluster implements Cluster {
  readonly shared = false;
  readonly masterId = newMasterId();
  private readonly startedAt = new Date().toISOString();
  private readonly handlers = new Map<string, (payload: unknown, from: string) => unknown>();

  constructor(private readonly address: () => string | undefined) {}

  async masters(): Promise<MasterInfo[]> {
    const now = new Date().toISOString();
    return [{ id: this.masterId, address: this.address() ?? '(starting)', startedAt: this.startedAt, lastSeenAt: now }];
  }

  async isAlive(masterId: string): Promise<boolean> {
    return masterId === this.masterId;
  }

  onMasterLost(): () => void {
    return () => undefined;
  }

  publish(): void {}

  subscribe<T>(_topic: string, _listener: ClusterListener<T>): () => void {
    return () => undefined;
  }

  handle<T = unknown, R = unknown>(kind: string, handler: (payload: T, from: string) => Promise<R> | R): () => void {
    this.handlers.set(kind, handler as (payload: unknown, from: string) => unknown);
    return () => void this.handlers.delete(kind);
  }

  async request<R = unknown>(to: string, kind: string, payload: unknown): Promise<R> {
    const handler = this.handlers.get(kind);
    if (to !== this.masterId || !handler)
      throw new RunnerError('master_unavailable', `master ${to} does not share this store`, { status: 503 });
    return (await handler(payload, this.masterId)) as R;
  }
}
