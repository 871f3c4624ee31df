import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Cluster, ClusterListener, Logger, MasterInfo, Migration } from '@runner/plugin-sdk';
import { ClusterMessages, unavailable } from './cluster-messages.js';
import type { PgChannel } from './pg-channel.js';
import type { PostgresStore } from './pg-store.js';

export const CLUSTER_OWNER = 'cluster';
/** The LISTEN channel of the masters sharing a database. */
export const CLUSTER_CHANNEL = 'runner_cluster';

/**
 * PostgreSQL only (the embedded store has one master), so its SQL may be PostgreSQL's: heartbeat
 * times are the server's clock in milliseconds, so masters whose clocks disagree still agree on
 * who is silent.
 */
export const CLUSTER_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'masters sharing the store: heartbeat rows, claims of dead ones',
    sql: `
      CREATE TABLE cluster_masters (
        id TEXT PRIMARY KEY,
        address TEXT NOT NULL,
        started_at TEXT NOT NULL,
        last_seen_ms BIGINT NOT NULL,
        claimed_by TEXT
      );`,
  },
];

const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export interface PgClusterOptions {
  /** Silent this long, a master is dead (`cluster.lease_timeout`). */
  leaseTimeoutMs: number;
  /** Between heartbeats, and between looks for dead masters (`cluster.heartbeat_interval`). */
  heartbeatMs: number;
  /** Where this master serves HTTP, once it does. */
  address(): string | undefined;
  logger: Logger;
}

interface MasterRow {
  id: string;
  address: string;
  started_at: string;
  last_seen_ms: number;
}

/** A master id: readable in messages (host, pid) and unique per process start. */
export function newMasterId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * The masters sharing a PostgreSQL store: this master's heartbeat row, the claim of dead ones
 * (an UPDATE that only one survivor's changes === 1), and messages over LISTEN/NOTIFY.
 */
export class PgCluster implements Cluster {
  readonly shared = true;
  readonly masterId = newMasterId();
  private readonly startedAt = new Date().toISOString();
  private readonly messages: ClusterMessages;
  private readonly lostHandlers = new Set<(master: MasterInfo) => Promise<void> | void>();
  private channel: PgChannel | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private declaredDead = false;
  /**
   * Live masters besides this one, as of the last heartbeat (or a newcomer's hello): with none,
   * what is published to all goes nowhere and costs no NOTIFY (one master on PostgreSQL).
   */
  private peers = 0;

  constructor(
    private readonly store: PostgresStore,
    private readonly options: PgClusterOptions,
  ) {
    this.messages = new ClusterMessages(
      this.masterId,
      (text) => this.channel?.send(text) ?? Promise.resolve(),
      options.logger,
    );
  }

  /** Writes this master's row and listens; looking for dead masters starts with `watch`. */
  async join(): Promise<void> {
    await this.store.migrate(CLUSTER_OWNER, CLUSTER_MIGRATIONS);
    await this.heartbeat();
    this.messages.subscribe('cluster.hello', () => {
      this.peers = Math.max(this.peers, 1);
    });
    this.channel = await this.store.openChannel(CLUSTER_CHANNEL, (text) => this.messages.received(text));
    this.peers = await this.countPeers();
    // The others send to this master from now on, not from their next heartbeat.
    this.messages.publish('cluster.hello', null);
    this.options.logger.info(
      `master ${this.masterId} joined the masters sharing the store (${this.peers} other(s) alive)`,
    );
  }

  /** Heartbeats and looks for dead masters every `heartbeatMs`, the first look now. */
  watch(): void {
    if (this.timer) return;
    const tick = () => {
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    };
    this.timer = setInterval(tick, this.options.heartbeatMs);
    this.timer.unref();
    tick();
  }

  /** Stops heartbeating and removes this master's row: it ended its runs itself. */
  async leave(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    this.messages.close();
    await this.store
      .run('DELETE FROM cluster_masters WHERE id = ? AND claimed_by IS NULL', [this.masterId])
      .catch((error: Error) =>
        this.options.logger.warn(`removing master ${this.masterId}'s row failed: ${error.message}`),
      );
  }

  async masters(): Promise<MasterInfo[]> {
    const rows = await this.store.all<MasterRow>(
      `SELECT id, address, started_at, last_seen_ms FROM cluster_masters
         WHERE claimed_by IS NULL AND last_seen_ms >= ${NOW_MS} - ? ORDER BY started_at, id`,
      [this.options.leaseTimeoutMs],
    );
    return rows.map(toInfo);
  }

  async isAlive(masterId: string): Promise<boolean> {
    if (masterId === this.masterId) return true;
    const row = await this.store.get(
      `SELECT 1 AS alive FROM cluster_masters WHERE id = ? AND claimed_by IS NULL AND last_seen_ms >= ${NOW_MS} - ?`,
      [masterId, this.options.leaseTimeoutMs],
    );
    return row !== undefined;
  }

  onMasterLost(handler: (master: MasterInfo) => Promise<void> | void): () => void {
    this.lostHandlers.add(handler);
    return () => void this.lostHandlers.delete(handler);
  }

  publish(topic: string, message: unknown, options: { to?: string } = {}): void {
    if (options.to === undefined && this.peers === 0) return;
    this.messages.publish(topic, message, options.to);
  }

  subscribe<T = unknown>(topic: string, listener: ClusterListener<T>): () => void {
    return this.messages.subscribe(topic, listener);
  }

  handle<T = unknown, R = unknown>(kind: string, handler: (payload: T, from: string) => Promise<R> | R): () => void {
    return this.messages.handle(kind, handler as (payload: unknown, from: string) => unknown);
  }

  async request<R = unknown>(
    to: string,
    kind: string,
    payload: unknown,
    options: { timeoutMs?: number } = {},
  ): Promise<R> {
    const describe = `master ${to}`;
    if (!(await this.isAlive(to))) throw unavailable(describe, 'is not alive (no heartbeat)');
    return this.messages.request<R>(to, kind, payload, describe, options.timeoutMs);
  }

  private async beat(): Promise<void> {
    try {
      await this.heartbeat();
      this.peers = await this.countPeers();
      await this.claimDead();
    } catch (error) {
      this.options.logger.warn(`master ${this.masterId}: heartbeat failed: ${(error as Error).message}`);
    }
  }

  private async countPeers(): Promise<number> {
    const row = await this.store.get<{ n: number }>(
      `SELECT count(*) AS n FROM cluster_masters WHERE claimed_by IS NULL AND id <> ? AND last_seen_ms >= ${NOW_MS} - ?`,
      [this.masterId, this.options.leaseTimeoutMs],
    );
    return row?.n ?? 0;
  }

  private async heartbeat(): Promise<void> {
    const address = this.options.address() ?? '(starting)';
    const written = await this.store.run(
      `INSERT INTO cluster_masters (id, address, started_at, last_seen_ms) VALUES (?, ?, ?, ${NOW_MS})
         ON CONFLICT (id) DO UPDATE SET address = excluded.address, last_seen_ms = excluded.last_seen_ms
         WHERE cluster_masters.claimed_by IS NULL`,
      [this.masterId, address, this.startedAt],
    );
    if (written.changes === 0 && !this.declaredDead) {
      // Silent past the lease (a long pause, a lost network): a survivor ended its runs already.
      this.declaredDead = true;
      this.options.logger.error(
        `master ${this.masterId} was declared dead by another master (no heartbeat for ${this.options.leaseTimeoutMs / 1000} s); the runs it was executing were ended interrupted there; restart this master`,
      );
    }
  }

  /** Claims each dead master once across all masters, tells the handlers, then removes its row. */
  private async claimDead(): Promise<void> {
    const dead = await this.store.all<MasterRow>(
      `SELECT id, address, started_at, last_seen_ms FROM cluster_masters
         WHERE claimed_by IS NULL AND last_seen_ms < ${NOW_MS} - ? AND id <> ?`,
      [this.options.leaseTimeoutMs, this.masterId],
    );
    for (const row of dead) {
      const claimed = await this.store.run(
        'UPDATE cluster_masters SET claimed_by = ? WHERE id = ? AND claimed_by IS NULL',
        [this.masterId, row.id],
      );
      if (claimed.changes !== 1) continue;
      const master = toInfo(row);
      this.options.logger.warn(
        `master ${master.id} at ${master.address} is dead (last seen ${master.lastSeenAt}); master ${this.masterId} takes over what it held`,
      );
      try {
        for (const handler of this.lostHandlers) await handler(master);
        await this.store.run('DELETE FROM cluster_masters WHERE id = ?', [row.id]);
      } catch (error) {
        // Let any master (this one included) claim it again on the next look.
        await this.store
          .run('UPDATE cluster_masters SET claimed_by = NULL WHERE id = ?', [row.id])
          .catch(() => undefined);
        throw error;
      }
    }
  }
}

function toInfo(row: MasterRow): MasterInfo {
  return {
    id: row.id,
    address: row.address,
    startedAt: row.started_at,
    lastSeenAt: new Date(row.last_seen_ms).toISOString(),
  };
}
