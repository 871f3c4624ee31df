import type { ExecutionSummary } from './types';

/** Task statuses that mean a task will not change any more. */
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'skipped', 'interrupted']);

/**
 * A run's task counts for people: `3 succeeded, 1 failed` once ended; while it runs, `n of N tasks`
 * when the counts say how many there are, else nothing (the elapsed time says it is alive).
 */
export function taskCounts(run: Pick<ExecutionSummary, 'status' | 'counts'>): string {
  const entries = Object.entries(run.counts).filter(([, n]) => n > 0);
  if (run.status === 'running') {
    const total = entries.reduce((sum, [, n]) => sum + n, 0);
    const done = entries.filter(([s]) => ENDED.has(s)).reduce((sum, [, n]) => sum + n, 0);
    return total > 0 ? `${done} of ${total} tasks` : '';
  }
  return entries.map(([s, n]) => `${n} ${s}`).join(', ');
}
