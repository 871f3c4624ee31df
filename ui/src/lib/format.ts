/** Formatting for people: sizes, durations, times. Shared by every page. */

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

export function bytes(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  let n = value;
  let unit = 0;
  while (Math.abs(n) >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit++;
  }
  return `${n.toFixed(unit === 0 ? 0 : 1)} ${UNITS[unit]}`;
}

/**
 * Seconds rounded for people: `1h 2m`, `3m 4s`, `42s`, `5.2s` or `120ms` (a tenth only where it
 * still matters, under ten seconds). The one duration formatter of the UI.
 */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  if (seconds < 60) return `${Math.round(seconds)}s`;
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return `${m}m ${s % 60}s`;
}

/** The time since `iso` (a running run's elapsed time), in whole seconds. */
export function elapsed(iso: string | undefined, now = Date.now()): string {
  const t = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(t)) return '–';
  const seconds = Math.floor((now - t) / 1000);
  return seconds < 1 ? '0s' : duration(seconds);
}

/** `12s ago`, `3m ago`, `2h ago`; the date for anything older than a day. */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return dateTime(iso);
}

export function dateTime(iso: string | number | undefined): string {
  if (iso === undefined || iso === '') return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function time(iso: string | number): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString();
}

export function percent(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(1)}%`;
}
