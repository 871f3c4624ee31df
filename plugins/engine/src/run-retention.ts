import { formatDuration, type RetentionPolicy, type Store } from '@runner/plugin-sdk';
import type { RetentionSettings } from './retention-config.js';

/** Runs handled per batch: a few milliseconds of sql.js work, then the event loop runs again. */
export const RETENTION_BATCH = 200;

/**
 * The first (started_at, id) that a rule keeps: everything before it in list order may go. The
 * age limit keeps what started at or after `now - maxAge`; the count limit keeps the newest
 * `maxRuns`. The later bound wins; null when neither removes anything.
 */
async function keptFrom(store: Store, now: Date, maxAgeMs: number, maxRuns: number): Promise<[string, string] | null> {
  let bound: [string, string] | null = maxAgeMs > 0 ? [new Date(now.getTime() - maxAgeMs).toISOString(), ''] : null;
  if (maxRuns > 0) {
    const beyond = await store.get<{ started_at: string; id: string }>(
      'SELECT started_at, id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?',
      [maxRuns],
    );
    // The smallest key after that run's: the run itself goes too.
    const afterBeyond: [string, string] | null = beyond ? [beyond.started_at, `${beyond.id}\u0000`] : null;
    if (afterBeyond && (bound === null || compareKeys(afterBeyond, bound) > 0)) bound = afterBeyond;
  }
  return bound;
}

/**
 * The runs a rule no longer keeps, given its kept bound as the two parameters: finished runs
 * before the bound (running ones stay). One clause for pruning and for counting what is due.
 */
const EXECUTIONS_DUE = "(started_at, id) < (?, ?) AND status NOT IN ('running', 'pending')";
/** Runs whose task logs a rule no longer keeps (and which still have them). */
const TASK_LOGS_DUE = `logs_pruned_at IS NULL AND ${EXECUTIONS_DUE}`;

async function countDue(store: Store, where: string, bound: Promise<[string, string] | null>): Promise<number> {
  const kept = await bound;
  if (kept === null) return 0;
  return (await store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runs WHERE ${where}`, kept))?.n ?? 0;
}

/**
 * The engine's policies over `store`: what setup registers (RunStore.retentionPolicies, with
 * `removed` resetting its cached lists) and what `runner db stats` reports without a master.
 */
export function engineRetentionPolicies(
  store: Store,
  settings: RetentionSettings,
  removed: () => void,
): RetentionPolicy[] {
  return [executionRetention(store, settings, removed), taskLogRetention(store, settings)];
}

function compareKeys(a: [string, string], b: [string, string]): number {
  return a[0] === b[0] ? (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) : a[0] < b[0] ? -1 : 1;
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

function ruleText(maxAgeMs: number, maxRuns: number, keys: string): string {
  const parts = [
    maxAgeMs > 0 ? `${formatDuration(maxAgeMs)} old at most` : '',
    maxRuns > 0 ? `the newest ${maxRuns}` : '',
  ];
  const rule = parts.filter(Boolean).join(', ');
  return `${rule || 'all (no limit set)'} (${keys})`;
}

/**
 * Executions: finished runs before the kept bound go with their task results and process records,
 * the oldest first. Running runs are never removed (they still count towards `max_runs`).
 */
export function executionRetention(store: Store, settings: RetentionSettings, removed: () => void): RetentionPolicy {
  return {
    name: 'executions',
    rule: ruleText(settings.maxAgeMs, settings.maxRuns, 'engine.retention.max_age, engine.retention.max_runs'),
    async kept() {
      const row = await store.get<{ n: number; oldest: string | null }>(
        'SELECT COUNT(*) AS n, MIN(started_at) AS oldest FROM runs',
      );
      return { count: row?.n ?? 0, oldest: row?.oldest ?? undefined };
    },
    due: (now) => countDue(store, EXECUTIONS_DUE, keptFrom(store, now, settings.maxAgeMs, settings.maxRuns)),
    async pruneBatch(now) {
      const bound = await keptFrom(store, now, settings.maxAgeMs, settings.maxRuns);
      if (bound === null) return 0;
      const ids = (
        await store.all<{ id: string }>(`SELECT id FROM runs WHERE ${EXECUTIONS_DUE} ORDER BY started_at, id LIMIT ?`, [
          ...bound,
          RETENTION_BATCH,
        ])
      ).map((row) => row.id);
      if (ids.length === 0) return 0;
      const inList = placeholders(ids.length);
      const written = store.transaction([
        { sql: `DELETE FROM run_tasks WHERE run_id IN (${inList})`, params: ids },
        { sql: `DELETE FROM run_processes WHERE run_id IN (${inList})`, params: ids },
        { sql: `DELETE FROM run_inputs WHERE run_id IN (${inList})`, params: ids },
        { sql: `DELETE FROM runs WHERE id IN (${inList})`, params: ids },
      ]);
      // Applied in memory already: lists must not show the removed runs from here on.
      removed();
      await written;
      return ids.length;
    },
  };
}

/**
 * Task logs: for finished runs before the kept bound, each task's log becomes one line saying it
 * was removed (`log_truncated` set); the run and its task results stay.
 */
export function taskLogRetention(store: Store, settings: RetentionSettings): RetentionPolicy {
  const keys = 'engine.retention.log_max_age, engine.retention.log_max_runs';
  return {
    name: 'task logs',
    rule: ruleText(settings.logMaxAgeMs, settings.logMaxRuns, keys),
    async kept() {
      const row = await store.get<{ n: number; oldest: string | null }>(
        'SELECT COUNT(*) AS n, MIN(started_at) AS oldest FROM runs WHERE logs_pruned_at IS NULL',
      );
      return { count: row?.n ?? 0, oldest: row?.oldest ?? undefined };
    },
    due: (now) => countDue(store, TASK_LOGS_DUE, keptFrom(store, now, settings.logMaxAgeMs, settings.logMaxRuns)),
    async pruneBatch(now) {
      const bound = await keptFrom(store, now, settings.logMaxAgeMs, settings.logMaxRuns);
      if (bound === null) return 0;
      const ids = (
        await store.all<{ id: string }>(`SELECT id FROM runs WHERE ${TASK_LOGS_DUE} ORDER BY started_at, id LIMIT ?`, [
          ...bound,
          RETENTION_BATCH,
        ])
      ).map((row) => row.id);
      if (ids.length === 0) return 0;
      const at = now.toISOString();
      const note = JSON.stringify([{ timestamp: at, level: 'info', message: `log removed by retention (${keys})` }]);
      const inList = placeholders(ids.length);
      await store.transaction([
        { sql: `UPDATE run_tasks SET log = ?, log_truncated = 1 WHERE run_id IN (${inList})`, params: [note, ...ids] },
        { sql: `UPDATE runs SET logs_pruned_at = ? WHERE id IN (${inList})`, params: [at, ...ids] },
      ]);
      return ids.length;
    },
  };
}
