import type { ExecutionFilter, RunRecord, RunStatus, Store } from '@runner/plugin-sdk';
import { InvalidInputError } from '@runner/plugin-sdk';

export type RunSummary = Omit<RunRecord, 'tasks'>;
export interface RunPage {
  runs: RunSummary[];
  total: number;
}

/** First pages kept at most (one per filter and limit); more distinct filters than this are rare. */
const MAX_CACHED_PAGES = 64;

/**
 * The executions list: `GET /api/v1/executions` and `runner executions list`. Three things keep it
 * cheap with many runs in the store:
 * - every filter has an index ending in (started_at, id), the list's order (run-lifecycle-schema.ts);
 * - the totals are counted once, then kept by workflow and status as runs start, end and go;
 * - first pages (offset 0, what the UI and the CLI ask for) are kept until the next write to runs.
 * The returned pages are shared: callers must not change them.
 */
export class RunList {
  private readonly pages = new Map<string, RunPage>();
  /** Runs by workflow, then status; undefined until first needed or after a bulk change. */
  private counts: Map<string, Map<RunStatus, number>> | undefined;
  /**
   * Bumped by every change: a page or a count read before a change and answered after it is
   * returned to its caller but not kept (reads are asynchronous; a write may land between).
   */
  private generation = 0;

  constructor(
    private readonly store: Store,
    /** A `runs` row as a run summary (run-store.ts, which owns the columns). */
    private readonly fromRow: (row: Record<string, unknown>) => RunSummary,
  ) {}

  async list(filter: ExecutionFilter = {}): Promise<RunPage> {
    const limit = filter.limit ?? 50;
    const offset = filter.offset ?? 0;
    const since = filter.since === undefined ? undefined : sinceToIso(filter.since);
    const key =
      offset === 0
        ? [filter.workflow, filter.status, since, filter.trigger, filter.user, filter.agent, filter.stack, limit].join(
            '\0',
          )
        : undefined;
    const cached = key === undefined ? undefined : this.pages.get(key);
    if (cached) return cached;

    const generation = this.generation;
    const { clause, params } = whereOf({ ...filter, since });
    // The kept totals are by workflow and status: other filters count in the store.
    const counted = since === undefined && !filter.trigger && !filter.user && !filter.agent && !filter.stack;
    const total = counted
      ? await this.count(filter.workflow || undefined, filter.status)
      : ((await this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runs ${clause}`, params))?.n ?? 0);
    const rows =
      limit === 0 || offset >= total
        ? []
        : await this.store.all<Record<string, unknown>>(
            `SELECT * FROM runs ${clause} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`,
            [...params, limit, offset],
          );
    const page = { runs: rows.map((row) => this.fromRow(row)), total };
    if (key !== undefined && generation === this.generation) {
      if (this.pages.size >= MAX_CACHED_PAGES) this.pages.clear();
      this.pages.set(key, page);
    }
    return page;
  }

  /**
   * Runs started since `filter.since` per hour or day (UTC), by status, oldest first: the
   * executions page's chart. ISO times sort and cut as text, so a bucket is a prefix of started_at.
   */
  async histogram(filter: HistogramFilter): Promise<{ start: string; counts: Record<string, number> }[]> {
    const { clause, params } = whereOf({ ...filter, since: sinceToIso(filter.since) });
    const width = filter.bucket === 'hour' ? 13 : 10;
    const rows = await this.store.all<{ bucket: string; status: string; n: number }>(
      `SELECT SUBSTR(started_at, 1, ${width}) AS bucket, status, COUNT(*) AS n FROM runs ${clause} GROUP BY SUBSTR(started_at, 1, ${width}), status ORDER BY 1`,
      params,
    );
    const buckets = new Map<string, Record<string, number>>();
    for (const row of rows) {
      const counts = buckets.get(row.bucket) ?? {};
      counts[row.status] = Number(row.n);
      buckets.set(row.bucket, counts);
    }
    const suffix = filter.bucket === 'hour' ? ':00:00.000Z' : 'T00:00:00.000Z';
    return [...buckets].map(([bucket, counts]) => ({ start: bucket + suffix, counts }));
  }

  /** The status and workflow of a run as stored now (before a write changes it). */
  async current(runId: string): Promise<{ workflow: string; status: RunStatus } | undefined> {
    const row = await this.store.get<{ workflow_name: string; status: RunStatus }>(
      'SELECT workflow_name, status FROM runs WHERE id = ?',
      [runId],
    );
    return row && { workflow: row.workflow_name, status: row.status };
  }

  /** A run was added (`from` undefined) or changed status. Call once its write is applied. */
  statusChanged(workflow: string, from: RunStatus | undefined, to: RunStatus): void {
    this.generation += 1;
    this.pages.clear();
    if (this.counts === undefined || from === to) return;
    const byStatus = this.counts.get(workflow) ?? new Map<RunStatus, number>();
    this.counts.set(workflow, byStatus);
    if (from !== undefined) byStatus.set(from, (byStatus.get(from) ?? 1) - 1);
    byStatus.set(to, (byStatus.get(to) ?? 0) + 1);
  }

  /** Many runs changed or went (retention, reconcile): counted again when next needed. */
  reset(): void {
    this.generation += 1;
    this.pages.clear();
    this.counts = undefined;
  }

  private async count(workflow: string | undefined, status: RunStatus | undefined): Promise<number> {
    let counts = this.counts;
    if (counts === undefined) {
      const generation = this.generation;
      counts = new Map();
      const rows = await this.store.all<{ workflow_name: string; status: RunStatus; n: number }>(
        'SELECT workflow_name, status, COUNT(*) AS n FROM runs GROUP BY workflow_name, status',
      );
      for (const row of rows) {
        const byStatus = counts.get(row.workflow_name) ?? new Map<RunStatus, number>();
        counts.set(row.workflow_name, byStatus.set(row.status, row.n));
      }
      if (generation === this.generation) this.counts = counts;
    }
    const workflows = workflow === undefined ? [...counts.values()] : [counts.get(workflow)];
    let n = 0;
    for (const byStatus of workflows) {
      if (byStatus === undefined) continue;
      if (status !== undefined) n += byStatus.get(status) ?? 0;
      else for (const count of byStatus.values()) n += count;
    }
    return n;
  }
}

/** ISO 8601 as given, or Unix seconds; a time outside what a date can hold is refused, not a 500. */
export function sinceToIso(since: string): string {
  const date = /^\d+(\.\d+)?$/.test(since) ? new Date(Number(since) * 1000) : new Date(since);
  if (Number.isNaN(date.getTime())) {
    throw new InvalidInputError(
      `since: expected an ISO 8601 time or Unix seconds up to year 275760, got "${since.slice(0, 40)}"`,
      { field: 'since' },
    );
  }
  return date.toISOString();
}

export interface HistogramFilter extends Pick<ExecutionFilter, 'workflow' | 'trigger' | 'user' | 'agent'> {
  since: string;
  bucket: 'hour' | 'day';
}

/** The WHERE clause of a list's or a chart's filters (`since` already ISO). */
function whereOf(filter: Omit<ExecutionFilter, 'limit' | 'offset'>): { clause: string; params: string[] } {
  const where: string[] = [];
  const params: string[] = [];
  const add = (sql: string, value: string | undefined) => {
    if (!value) return;
    where.push(sql);
    params.push(value);
  };
  add('workflow_name = ?', filter.workflow);
  add('status = ?', filter.status);
  add('trigger = ?', filter.trigger);
  add('"user" = ?', filter.user);
  add('stack = ?', filter.stack);
  add('id IN (SELECT run_id FROM run_tasks WHERE agent = ?)', filter.agent);
  add('started_at >= ?', filter.since);
  return { clause: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}
