import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  roundSeconds,
  type Logger,
  type RunStatus,
  type StartedProcessGroup,
  type Store,
  type TaskStatus,
} from '@runner/plugin-sdk';

/** How long a run's lease lasts without renewal; the holder renews it every third of that. */
export const LEASE_TTL_MS = 60_000;
/** Between SIGTERM and SIGKILL to a process group left by an interrupted run. */
export const ORPHAN_KILL_GRACE_MS = 2_000;

/**
 * Who holds a lease: host, pid and this process's start time (a pid alone is reused). Shown in the
 * reason an interrupted run records.
 */
export function processOwner(): string {
  const started = new Date(Date.now() - Math.round(process.uptime() * 1000)).toISOString();
  return `pid ${process.pid} on ${hostname()} (started ${started})`;
}

/**
 * Runs are leased by the process executing them: `lease_owner`, and `lease_expires_at`, renewed
 * while the run goes on. Today one process holds a data directory (its lock), so at start every
 * run still `running` under another owner is dead; a store shared by several masters would
 * reclaim only runs whose lease expired (`reconcileRuns` with `exclusive: false`).
 */
export class RunLeases {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    readonly owner: string,
    private readonly logger: Logger,
    private readonly ttlMs = LEASE_TTL_MS,
  ) {}

  /** `lease_owner` and `lease_expires_at` for a run starting now. */
  params(now = Date.now()): [string, string] {
    return [this.owner, new Date(now + this.ttlMs).toISOString()];
  }

  /** One write renews every run of this owner; none when it runs nothing (an idle master writes nothing). */
  async renew(now = Date.now()): Promise<unknown> {
    const running = await this.store.get(
      "SELECT 1 AS x FROM runs WHERE status = 'running' AND lease_owner = ? LIMIT 1",
      [this.owner],
    );
    if (running === undefined) return;
    return this.store.run("UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND status = 'running'", [
      new Date(now + this.ttlMs).toISOString(),
      this.owner,
    ]);
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.renew().catch((error: Error) => this.logger.warn(`renewing run leases failed: ${error.message}`));
    }, this.ttlMs / 3);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** What identifies a process beyond its pid: the boot, and its start time in clock ticks (Linux). */
interface ProcessIdentity {
  bootId: string;
  startTicks: string;
}

function processIdentity(pid: number): ProcessIdentity | undefined {
  try {
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses); starttime is field 22.
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return startTicks === undefined ? undefined : { bootId, startTicks };
  } catch {
    return undefined;
  }
}

/**
 * Records each process group a task starts (`run_processes`) until it ends, so the next start
 * finds those of runs that were interrupted.
 */
export function recordProcessGroups(store: Store, owner: string, logger: Logger) {
  const failed = (error: Error) => logger.warn(`recording a process group failed: ${error.message}`);
  return (group: StartedProcessGroup): (() => void) => {
    const identity = processIdentity(group.pgid);
    store
      .run(
        `INSERT INTO run_processes (run_id, pgid, owner, boot_id, start_ticks, started_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (run_id, pgid) DO UPDATE SET owner = excluded.owner, boot_id = excluded.boot_id,
             start_ticks = excluded.start_ticks, started_at = excluded.started_at`,
        [
          group.runId,
          group.pgid,
          owner,
          identity?.bootId ?? null,
          identity?.startTicks ?? null,
          new Date().toISOString(),
        ],
      )
      .catch(failed);
    return () => {
      store.run('DELETE FROM run_processes WHERE run_id = ? AND pgid = ?', [group.runId, group.pgid]).catch(failed);
    };
  };
}

export interface InterruptedRun {
  id: string;
  workflowName: string;
  stack: string | null;
  startedAt: string;
  /** The last time the run was known alive (its lease's last renewal), at most now. */
  completedAt: string;
  duration: number;
  reason: string;
  /** Process groups of the run that were still running and were killed. */
  killed: number[];
}

interface StuckRow {
  id: string;
  workflow_name: string;
  stack: string | null;
  status: RunStatus;
  started_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
}

interface ProcessRow {
  run_id: string;
  pgid: number;
  boot_id: string | null;
  start_ticks: string | null;
}

export interface ReconcileOptions {
  store: Store;
  /** This process: its own runs are never reclaimed. */
  owner: string;
  logger: Logger;
  /**
   * True while this process holds the data directory alone (the store's lock): every other owner
   * is dead. False for a shared store: only expired leases are reclaimed.
   */
  exclusive: boolean;
  /**
   * A master sharing the store that died, claimed by this one (the cluster service): its runs end
   * whatever their lease says, with a reason naming it. Only its runs are looked at.
   */
  lost?: { id: string; address: string; lastSeenAt: string };
  now?: Date;
  ttlMs?: number;
  /** Sends a signal to a process group (tests may watch it); default `process.kill(-pgid, signal)`. */
  killGroup?: (pgid: number, signal: NodeJS.Signals) => void;
}

/**
 * Ends every run left `running` or `pending` by a process that is gone: status `interrupted`, the
 * reason as its error, its task counts, and the lease cleared, in one transaction; then kills the
 * process groups its tasks left running (only when the group is provably the one recorded: same
 * boot, same leader start time). Returns what it ended, for the caller to announce.
 */
export async function reconcileRuns(options: ReconcileOptions): Promise<InterruptedRun[]> {
  const { store, owner, logger } = options;
  const now = options.now ?? new Date();
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  const { lost } = options;
  const stuck = (
    await store.all<StuckRow>(
      `SELECT id, workflow_name, stack, status, started_at, lease_owner, lease_expires_at FROM runs WHERE status IN ('running', 'pending')${lost ? ' AND lease_owner = ?' : ''}`,
      lost ? [lost.id] : [],
    )
  ).filter(
    (row) =>
      row.lease_owner !== owner &&
      (lost !== undefined ||
        options.exclusive ||
        row.lease_expires_at === null ||
        row.lease_expires_at < now.toISOString()),
  );
  const interrupted: InterruptedRun[] = stuck.map((row) => {
    // A lease is renewed every ttl/3: the run was alive at least until its last renewal.
    const lastAlive = row.lease_expires_at === null ? undefined : Date.parse(row.lease_expires_at) - ttlMs;
    const end = Math.min(now.getTime(), Math.max(Date.parse(row.started_at), lastAlive ?? now.getTime()));
    const holder = row.lease_owner ?? 'a process that recorded no lease';
    return {
      id: row.id,
      workflowName: row.workflow_name,
      stack: row.stack,
      startedAt: row.started_at,
      completedAt: new Date(end).toISOString(),
      duration: roundSeconds(Math.max(0, (end - Date.parse(row.started_at)) / 1000)),
      reason: lost
        ? `interrupted: master ${lost.id} at ${lost.address} died before the run ended (no heartbeat since ${lost.lastSeenAt}); ended by master ${owner}`
        : `interrupted: ${holder} stopped before the run ended; found at the start of ${owner}`,
      killed: [],
    };
  });
  const ids = new Set(interrupted.map((run) => run.id));
  const groups = await store.all<ProcessRow>('SELECT run_id, pgid, boot_id, start_ticks FROM run_processes');
  const statements: { sql: string; params: (string | number | null)[] }[] = [];
  for (const run of interrupted) {
    const counts: Partial<Record<TaskStatus, number>> = {};
    for (const { status, n } of await store.all<{ status: TaskStatus; n: number }>(
      'SELECT status, COUNT(*) AS n FROM run_tasks WHERE run_id = ? GROUP BY status',
      [run.id],
    ))
      counts[status] = n;
    statements.push({
      // Only if still running: another master may have ended it meanwhile (each run ends once).
      sql: "UPDATE runs SET status = 'interrupted', completed_at = ?, duration = ?, error = ?, counts = ?, lease_expires_at = NULL WHERE id = ? AND status IN ('running', 'pending')",
      params: [run.completedAt, run.duration, run.reason, JSON.stringify(counts), run.id],
    });
  }
  // Records of runs no longer running (interrupted now, or whose end was written but not the
  // process's) are done with; those of runs still leased elsewhere stay.
  const live = new Set(
    (await store.all<{ id: string }>("SELECT id FROM runs WHERE status IN ('running', 'pending')")).map((r) => r.id),
  );
  const finishedGroups = groups.filter((g) => ids.has(g.run_id) || !live.has(g.run_id));
  for (const g of finishedGroups)
    statements.push({ sql: 'DELETE FROM run_processes WHERE run_id = ? AND pgid = ?', params: [g.run_id, g.pgid] });
  if (statements.length > 0) {
    const results = await store.transaction(statements);
    const ended = interrupted.filter((_run, i) => results[i]?.changes === 1);
    interrupted.splice(0, interrupted.length, ...ended);
    for (const id of [...ids]) if (!ended.some((run) => run.id === id)) ids.delete(id);
  }

  const kill =
    options.killGroup ??
    ((pgid: number, signal: NodeJS.Signals) => {
      process.kill(-pgid, signal);
    });
  for (const g of groups.filter((group) => ids.has(group.run_id))) {
    if (!groupIsTheRecordedOne(g)) continue;
    try {
      kill(g.pgid, 'SIGTERM');
    } catch {
      continue; // ESRCH: gone meanwhile
    }
    interrupted.find((run) => run.id === g.run_id)?.killed.push(g.pgid);
    logger.warn(`killed process group ${g.pgid} left running by interrupted run ${g.run_id}`, {
      run_id: g.run_id,
      pgid: g.pgid,
    });
    setTimeout(() => {
      try {
        kill(g.pgid, 'SIGKILL');
      } catch {} // ESRCH: it ended on SIGTERM
    }, ORPHAN_KILL_GRACE_MS).unref();
  }
  for (const run of interrupted)
    logger.warn(`run ${run.id} (${run.workflowName}) marked interrupted: ${run.reason}`, { run_id: run.id });
  return interrupted;
}

/**
 * Whether process group `pgid` still exists and is the one recorded. Linux allocates no pid that is
 * in use as a group id, so a group with that id during this boot whose leader (if still there)
 * started at the recorded time is the same group.
 */
function groupIsTheRecordedOne(group: ProcessRow): boolean {
  try {
    process.kill(-group.pgid, 0);
  } catch {
    return false; // gone
  }
  if (group.boot_id === null || group.start_ticks === null) return false; // cannot tell: leave it
  const bootId = processIdentity(process.pid)?.bootId;
  if (bootId !== group.boot_id) return false;
  const leader = processIdentity(group.pgid);
  return leader === undefined || leader.startTicks === group.start_ticks;
}
