import type { paths } from '$lib/api/schema';

export type Job =
  paths['/api/v1/scheduler/jobs']['get']['responses'][200]['content']['application/json']['jobs'][number];
export type Slot =
  paths['/api/v1/scheduler/jobs/{name}/history']['get']['responses'][200]['content']['application/json']['slots'][number];
export type JobBody = paths['/api/v1/scheduler/jobs']['post']['requestBody']['content']['application/json'];

/** What an outcome means, for people (the history's badge and its tooltip). */
export const OUTCOMES: Record<Slot['outcome'], string> = {
  started: 'the run started',
  skipped_overlap: 'not run: the run before it was still running (overlap policy)',
  missed: 'not run: no master ran the scheduler at that time (missed-run policy)',
  failed_to_start: 'the run could not start',
  claimed: 'claimed, the run is starting',
  queued: 'waiting for the run before it to end',
};

/** A moment spelled out in the job's own time zone: `Monday 4 May 2026, 10:00 CEST`. */
export function inZone(iso: string, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(new Date(iso));
}

/** How far ahead a moment is, in words: `in 3 hours 20 minutes`, `in 2 days`, `now`. */
export function fromNow(iso: string, now: number): string {
  const minutes = Math.round((Date.parse(iso) - now) / 60_000);
  if (minutes <= 0) return 'now';
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (minutes < 60) return `in ${unit(minutes, 'minute')}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `in ${unit(hours, 'hour')}${minutes % 60 ? ` ${unit(minutes % 60, 'minute')}` : ''}`;
  const days = Math.floor(hours / 24);
  return `in ${unit(days, 'day')}${hours % 24 ? ` ${unit(hours % 24, 'hour')}` : ''}`;
}

/** `k=v` lines as vars, and back. */
export function parseVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)) {
    const at = line.indexOf('=');
    if (at > 0) vars[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    else vars[line] = '';
  }
  return vars;
}

export function formatVars(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}
