// Duplicated from plugins/workflow/src/duration.ts (same grammar as the workflow language's
// durations): a plugin never imports another plugin's files, and ten lines do not justify a
// shared package.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `<number><unit>` with unit ms, s, m, h or d (`90s`, `1.5h`, `250ms`), or a bare number of seconds.
 * Returns whole milliseconds. Throws an Error whose message starts with `what`.
 */
export function parseDuration(input: unknown, what: string): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new Error(`${what} must be a non-negative duration, got ${input}`);
    return Math.round(input * 1000);
  }
  if (typeof input !== 'string') throw new Error(`${what} must be a duration such as "5s" or a number of seconds`);
  const match = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)?$/.exec(input.trim());
  if (!match) throw new Error(`${what}: invalid duration ${JSON.stringify(input)} (use e.g. "250ms", "5s", "1.5h")`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 's']);
}

/** 120000 → `2m`, 1500 → `1.5s`, 250 → `250ms`: for messages. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`;
}
