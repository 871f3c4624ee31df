import { formatDuration, type RetentionPolicy, type Store } from '@runner/plugin-sdk';

/** Events removed per batch: a few milliseconds of work, so writes go on between batches. */
const BATCH = 500;
const FINISHED = "status IN ('completed', 'failed')";

export interface EventRetention {
  /** 0: no limit by age. */
  maxAgeMs: number;
  /** 0: no limit by count. */
  maxEvents: number;
}

/**
 * Finished events (completed or failed) older than `maxAgeMs`, or past the newest `maxEvents`, go
 * with their hook results, the oldest first. Pending and processing events are never removed (a
 * queue that cannot keep up loses nothing); they count towards `maxEvents`.
 */
export function eventRetention(store: Store, settings: EventRetention): RetentionPolicy {
  const rule = [
    settings.maxAgeMs > 0 ? `${formatDuration(settings.maxAgeMs)} old at most` : '',
    settings.maxEvents > 0 ? `the newest ${settings.maxEvents}` : '',
  ].filter(Boolean);
  const dueIds = async (now: Date, limit: number): Promise<string[]> => {
    const ids = new Set<string>();
    if (settings.maxAgeMs > 0)
      for (const row of await store.all<{ id: string }>(
        `SELECT id FROM events WHERE ${FINISHED} AND emitted_at < ? ORDER BY id LIMIT ?`,
        [now.getTime() - settings.maxAgeMs, limit],
      ))
        ids.add(row.id);
    if (settings.maxEvents > 0 && ids.size < limit) {
      const total = (await store.get<{ n: number }>('SELECT COUNT(*) AS n FROM events'))?.n ?? 0;
      const over = Math.min(total - settings.maxEvents, limit);
      if (over > 0)
        for (const row of await store.all<{ id: string }>(
          `SELECT id FROM events WHERE ${FINISHED} ORDER BY id LIMIT ?`,
          [over],
        ))
          ids.add(row.id);
    }
    return [...ids].slice(0, limit);
  };
  return {
    name: 'events',
    rule: `${rule.join(', ') || 'all (no limit set)'} (events.retention.max_age, events.retention.max_events)`,
    async kept() {
      const row = await store.get<{ n: number; oldest: number | null }>(
        'SELECT COUNT(*) AS n, MIN(emitted_at) AS oldest FROM events',
      );
      return { count: row?.n ?? 0, oldest: row?.oldest ? new Date(row.oldest).toISOString() : undefined };
    },
    async due(now) {
      return (await dueIds(now, BATCH * 20)).length;
    },
    async pruneBatch(now) {
      const ids = await dueIds(now, BATCH);
      if (ids.length === 0) return 0;
      const list = ids.map(() => '?').join(', ');
      await store.transaction([
        { sql: `DELETE FROM event_hook_results WHERE event_id IN (${list})`, params: ids },
        { sql: `DELETE FROM events WHERE id IN (${list})`, params: ids },
      ]);
      return ids.length;
    },
  };
}
