import type { AgentRegistry, DashboardTile, WorkflowEngine } from '@runner/plugin-sdk';
import { Permissions } from '@runner/plugin-sdk';

const DAY_MS = 24 * 3600 * 1000;
const MINUTE_MS = 60_000;

export interface AgentCounts {
  total: number;
  online: number;
  offline: number;
  warning: number;
  error: number;
}

export function agentCounts(registry: AgentRegistry): AgentCounts {
  const agents = registry.list();
  const by = (status: string) => agents.filter((a) => a.status === status).length;
  return {
    total: agents.length,
    // Warning agents are up and heartbeating, only busy: they count as online.
    online: by('online') + by('warning'),
    offline: by('offline'),
    warning: by('warning'),
    error: by('error'),
  };
}

export interface ExecutionCounts {
  total: number;
  running: number;
  last_24h: number;
  succeeded_24h: number;
  failed_24h: number;
  cancelled_24h: number;
  recent: {
    id: string;
    workflow_name: string;
    status: string;
    trigger?: string;
    started_at: string;
    duration?: number;
  }[];
}

export async function executionCounts(engine: WorkflowEngine, now = Date.now()): Promise<ExecutionCounts> {
  // From the start of the current minute: the same `since` for a minute lets the engine answer
  // from its first-page cache (kept per filter until a run is written). A new `since` each
  // millisecond cost three counts over the index per call and evicted the executions list's
  // cached pages (about 1.6 ms a call at 10,000 runs).
  const since = new Date(Math.floor(now / MINUTE_MS) * MINUTE_MS - DAY_MS).toISOString();
  const [latest, running, last24h, succeeded24h, failed24h, cancelled24h] = await Promise.all([
    engine.list({ limit: 10 }),
    engine.list({ status: 'running', limit: 1 }),
    engine.list({ since, limit: 1 }),
    engine.list({ since, status: 'succeeded', limit: 1 }),
    engine.list({ since, status: 'failed', limit: 1 }),
    engine.list({ since, status: 'cancelled', limit: 1 }),
  ]);
  return {
    total: latest.total,
    running: running.total,
    last_24h: last24h.total,
    succeeded_24h: succeeded24h.total,
    failed_24h: failed24h.total,
    cancelled_24h: cancelled24h.total,
    recent: latest.runs.map((run) => ({
      id: run.id,
      workflow_name: run.workflowName,
      status: run.status,
      trigger: run.trigger,
      started_at: run.startedAt,
      duration: run.duration,
    })),
  };
}

/**
 * `read` once for every caller that asks while a read is under way: one GET /dashboard reads the
 * executions counts for three tiles and its `executions` field, which need one set of queries.
 */
export function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    if (pending) return pending;
    const started = read();
    pending = started;
    const clear = () => {
      if (pending === started) pending = undefined;
    };
    started.then(clear, clear);
    return started;
  };
}

/** The dashboard's own tiles, contributed like any plugin's: agents (order 10) and executions (20). */
export function ownTiles(
  agents: (() => Promise<AgentCounts>) | undefined,
  executions: (() => Promise<ExecutionCounts>) | undefined,
): DashboardTile[] {
  const tiles: DashboardTile[] = [];
  if (agents) {
    const agentTile = (tile: Omit<DashboardTile, 'permission'>): DashboardTile => ({
      ...tile,
      permission: Permissions.agentView,
    });
    tiles.push(
      agentTile({
        id: 'agents',
        title: 'Agents',
        href: '/agents',
        order: 10,
        read: async () => ({ value: (await agents()).total }),
      }),
      agentTile({
        id: 'online-agents',
        title: 'Online agents',
        href: '/agents?status=online',
        order: 11,
        read: async () => {
          const counts = await agents();
          return { value: counts.online, detail: `${counts.warning} warning · ${counts.error} error` };
        },
      }),
    );
  }
  if (executions) {
    const runTile = (tile: Omit<DashboardTile, 'permission'>): DashboardTile => ({
      ...tile,
      permission: Permissions.workflowView,
    });
    tiles.push(
      runTile({
        id: 'executions',
        title: 'Executions',
        href: '/executions',
        order: 20,
        read: async () => ({ value: (await executions()).total }),
      }),
      runTile({
        id: 'running',
        title: 'Running',
        href: '/executions?status=running',
        order: 21,
        read: async () => ({ value: (await executions()).running }),
      }),
      runTile({
        id: 'executions-24h',
        title: 'Executions in 24 h',
        href: '/executions?range=24h',
        order: 22,
        read: async () => {
          const counts = await executions();
          return {
            value: counts.last_24h,
            detail: `${counts.succeeded_24h} succeeded · ${counts.failed_24h} failed · ${counts.cancelled_24h} cancelled`,
          };
        },
      }),
    );
  }
  return tiles;
}
