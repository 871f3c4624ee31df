import type { Logger, Migration, Store } from '@runner/plugin-sdk';

/** What the master remembers of an agent across restarts (status is not kept: a restarted master starts with every agent offline). */
export interface StoredAgent {
  name: string;
  address: string;
  last_heartbeat: string;
  cpu_usage: number;
  memory_usage: number;
  disk_usage: number;
  uptime: number;
  version: string;
  hostname: string;
  os: string;
  registered_at: string;
  modules: string[];
  labels: Record<string, string>;
}

export const AGENT_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'agents known to the master',
    sql: `CREATE TABLE agents (
      name TEXT PRIMARY KEY,
      address TEXT NOT NULL,
      last_heartbeat TEXT NOT NULL,
      cpu_usage REAL NOT NULL DEFAULT 0,
      memory_usage REAL NOT NULL DEFAULT 0,
      disk_usage REAL NOT NULL DEFAULT 0,
      uptime INTEGER NOT NULL DEFAULT 0,
      version TEXT NOT NULL DEFAULT '',
      hostname TEXT NOT NULL DEFAULT '',
      os TEXT NOT NULL DEFAULT '',
      registered_at TEXT NOT NULL,
      modules TEXT NOT NULL DEFAULT '[]',
      labels TEXT NOT NULL DEFAULT '{}'
    )`,
  },
];

const UPSERT = `INSERT INTO agents (name, address, last_heartbeat, cpu_usage, memory_usage, disk_usage, uptime, version, hostname, os, registered_at, modules, labels)
  VALUES ($name, $address, $last_heartbeat, $cpu_usage, $memory_usage, $disk_usage, $uptime, $version, $hostname, $os, $registered_at, $modules, $labels)
  ON CONFLICT(name) DO UPDATE SET address = excluded.address, last_heartbeat = excluded.last_heartbeat,
    cpu_usage = excluded.cpu_usage, memory_usage = excluded.memory_usage, disk_usage = excluded.disk_usage,
    uptime = excluded.uptime, version = excluded.version, hostname = excluded.hostname, os = excluded.os,
    registered_at = excluded.registered_at, modules = excluded.modules, labels = excluded.labels`;

/**
 * Agents in the store. Heartbeats change an agent every few seconds, and a master may have
 * thousands: writes are coalesced. A registration or disconnection is written on the next tick;
 * heartbeat data at most every `intervalMs`; all of it in one transaction per flush.
 */
export class AgentStore {
  private readonly dirty = new Map<string, StoredAgent | null>();
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Immediate;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  async open(): Promise<StoredAgent[]> {
    await this.store.migrate('agent-transport', AGENT_MIGRATIONS);
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
    const rows = await this.store.all<Record<string, unknown>>('SELECT * FROM agents ORDER BY name');
    return rows.map((row) => ({
      ...(row as unknown as StoredAgent),
      modules: parseJson(row.modules, []),
      labels: parseJson(row.labels, {}),
    }));
  }

  /** Heartbeat data: written with the next periodic flush. */
  touch(agent: StoredAgent): void {
    this.dirty.set(agent.name, agent);
  }

  /** Registration or disconnection: written on the next tick. */
  save(agent: StoredAgent): void {
    this.dirty.set(agent.name, agent);
    this.flushSoon();
  }

  delete(name: string): void {
    this.dirty.set(name, null);
    this.flushSoon();
  }

  /** Writes what is pending; flushes run one after the other. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.soon) clearImmediate(this.soon);
    await this.flush();
  }

  private flushSoon(): void {
    this.soon ??= setImmediate(() => {
      this.soon = undefined;
      void this.flush();
    });
  }

  private async write(): Promise<void> {
    if (this.dirty.size === 0) return;
    const batch = [...this.dirty];
    this.dirty.clear();
    const statements = batch.map(([name, agent]) =>
      agent === null
        ? { sql: 'DELETE FROM agents WHERE name = ?', params: [name] }
        : {
            sql: UPSERT,
            params: {
              $name: agent.name,
              $address: agent.address,
              $last_heartbeat: agent.last_heartbeat,
              $cpu_usage: agent.cpu_usage,
              $memory_usage: agent.memory_usage,
              $disk_usage: agent.disk_usage,
              $uptime: Math.round(agent.uptime),
              $version: agent.version,
              $hostname: agent.hostname,
              $os: agent.os,
              $registered_at: agent.registered_at,
              $modules: JSON.stringify(agent.modules),
              $labels: JSON.stringify(agent.labels),
            },
          },
    );
    try {
      await this.store.transaction(statements);
    } catch (error) {
      // Keep the newest state for the next attempt unless something newer arrived meanwhile.
      for (const [name, agent] of batch) if (!this.dirty.has(name)) this.dirty.set(name, agent);
      this.logger.error(`could not save ${batch.length} agent record(s): ${(error as Error).message}`);
    }
  }
}

function parseJson<T>(value: unknown, fallback: T): T {
  try {
    return typeof value === 'string' ? (JSON.parse(value) as T) : fallback;
  } catch {
    return fallback;
  }
}
