import type { paths } from '$lib/api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type Histogram = Json<paths['/api/v1/executions/histogram']['get']['responses'][200]>;

/** What can start a run, as the list filters it. */
export const TRIGGERS = ['api', 'cli', 'scheduler', 'hook', 'flow'] as const;

/** The chart's parts: ended runs by outcome, in the status colours of the rest of the UI. */
export const SERIES = [
  { label: 'succeeded', color: '--ok' },
  { label: 'failed', color: '--bad' },
  { label: 'cancelled', color: '--off' },
] as const;

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/**
 * Every bucket from `start` to `end` (empty ones too, so gaps show as gaps), hourly up to a day
 * and daily beyond, with the master's counts put in; labels in local time.
 */
export function chartBuckets(histogram: Histogram, start: number, end: number, bucket: 'hour' | 'day', range: string) {
  const daily = bucket === 'day';
  const width = daily ? DAY : HOUR;
  const counts = new Map(histogram.buckets.map((b) => [Date.parse(b.start), b.counts]));
  const first = Math.floor(start / width) * width;
  const buckets = [];
  for (let at = first; at <= end; at += width) {
    const c = counts.get(at) ?? {};
    const when = new Date(at);
    buckets.push({
      label: daily
        ? when.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
        : when.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }),
      title: daily ? when.toLocaleDateString() : when.toLocaleString(),
      values: SERIES.map((s) => c[s.label] ?? 0),
    });
  }
  const label = daily ? `Runs per day, last ${Math.round((end - start) / DAY)} days` : 'Runs per hour, last 24 hours';
  return { label: range === '1h' ? `${label} (the list shows the last hour)` : label, buckets, series: [...SERIES] };
}
