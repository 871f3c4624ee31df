import { formatDuration, type RetentionPolicy, type Store } from '@runner/plugin-sdk';
import type { RetentionSettings } from './retention-config.js';

/** Runs handled per batch: a few milliseconds of sql.js work, then the event loop runs again. */
export const RETENTION_BATCH = 200;

/**
 * Where a rule's kept runs begin, in list order: runs before `key` may go, and `key`'s own run
 * too when `through` (the count limit's bound is the newest run beyond the count, which goes).
 * An explicit flag rather than the key's successor: a `\u0000` suffix is no text PostgreSQL takes.
 */
interface KeptBound {
  key: [string, string];
  through: boolean;
}

/**
 * The bound of a rule: the age limit keeps what started at or after `now - maxAge`; the count
 * limit keeps the newest `maxRuns`. The later bound wins; null when neither removes anything.
 */
async function keptFrom(store: Store, now: Date, maxAgeMs: number, maxRuns: number): Promise<KeptBound | null> {
  let bound: KeptBound | null =
    maxAgeMs > 0 ? { key: [new Date(now.getTime() - maxAgeMs).toISOString(), ''], through: false } : null;
  if (maxRuns > 0) {
    const beyond = await store.get<{ started_at: string; id: string }>(
      'SELECT started_at, id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?',
      [maxRuns],
    );
    const byCount: KeptBound | null = beyond ? { key: [beyond.started_at, beyond.id], through: true } : null;
    if (byCount && (bound === null || compareBounds(byCount, bound) > 0)) bound = byCount;
  }
  return bound;
}

/**
 * The runs a rule no longer keeps, given its bound (the two parameters are `bound.key`): finished
 * runs before the bound (running ones stay). One clause for pruning and for counting what is due.
 */
function executionsDue(bound: KeptBound): string {
  return `(started_at, id) ${bound.through ? '<=' : '<'} (?, ?) AND status NOT IN ('running', 'pending')`;
}

/** Runs whose task logs a rule no longer keeps (and which still have them). */
function taskLogsDue(bound: KeptBound): string {
  return `logs_pruned_at IS NULL AND ${executionsDue(bound)}`;
}

async function countDue(
  store: Store,
  where: (bound: KeptBound) => string,
  bound: Promise<KeptBound | null>,
): Promise<number> {
  const kept = await bound;
  if (kept === null) return 0;
  return (await store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runs WHERE ${where(kept)}`, kept.key))?.n ?? 0;
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

/** Which bound keeps more (> 0: `a`): the later key, or at the same key the one that keeps it. */
function compareBounds(a: KeptBound, b: KeptBound): number {
  const [ak, bk] = [a.key, b.key];
  const byKey = ak[0] === bk[0] ? (ak[1] < bk[1] ? -1 : ak[1] > bk[1] ? 1 : 0) : ak[0] < bk[0] ? -1 : 1;
  if (byKey !== 0) return byKey;
  return Number(b.through) - Number(a.through);
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
    due: (now) => countDue(store, executionsDue, keptFrom(store, now, settings.maxAgeMs, settings.maxRuns)),
    async pruneBatch(now) {
      const bound = await keptFrom(store, now, settings.maxAgeMs, settings.maxRuns);
      if (bound === null) return 0;
      const ids = (
        await store.all<{ id: string }>(
          `SELECT id FROM runs WHERE ${executionsDue(bound)} ORDER BY started_at, id LIMIT ?`,
          [...bound.key, RETENTION_BATCH],
        )
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
    due: (now) => countDue(store, taskLogsDue, keptFrom(store, now, settings.logMaxAgeMs, settings.logMaxRuns)),
    async pruneBatch(now) {
      const bound = await keptFrom(store, now, settings.logMaxAgeMs, settings.logMaxRuns);
      if (bound === null) return 0;
      const ids = (
        await store.all<{ id: string }>(
          `SELECT id FROM runs WHERE ${taskLogsDue(bound)} ORDER BY started_at, id LIMIT ?`,
          [...bound.key, RETENTION_BATCH],
        )
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
