import type { MetricsService } from '@runner/plugin-sdk';

/**
 * How a scheduled slot came to start: at its time (`due`), after waiting under overlap `queue`
 * for the job's previous run (`queued`), or as a catch-up of a missed slot (`catch_up`). Kept
 * apart because only `due` says how late the scheduler itself was: the others are late by design.
 */
export type StartKind = 'due' | 'queued' | 'catch_up';

/** Seconds a slot's run started after the slot's time, by how it started. */
export type LatenessObserver = (seconds: number, start: StartKind) => void;

/** From well under the 5 s target to an hour (a catch-up after downtime). */
const BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** Declares `runner_scheduler_start_lateness_seconds{start}` and returns what observes it. */
export function latenessMetric(metrics: MetricsService): LatenessObserver {
  const histogram = metrics.histogram<'start'>({
    name: 'runner_scheduler_start_lateness_seconds',
    help: "seconds from a scheduled slot's time to its run recorded started, by how it started (due, queued, catch_up)",
    labelNames: ['start'],
    buckets: BUCKETS,
  });
  return (seconds, start) => histogram.observe({ start }, seconds);
}
