import { InvalidInputError } from './errors.js';

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
});

const EXAMPLE = 'e.g. "90s" or "1.5h"';

/**
 * Durations as the workflow language writes them (workflow-language.md, "Durations and cron"),
 * shared by the parser, the engine and every module that takes a duration.
 *
 * Reads a duration: `<number><unit>` with unit ms, s, m, h or d (`90s`, `1.5h`, `250ms`), or a
 * bare number of seconds (`30`, or the YAML number 30). Returns whole milliseconds, rounded.
 * Throws an InvalidInputError naming the text and what is wrong with it.
 */
export function parseDuration(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new InvalidInputError(`invalid duration ${input}: not a finite number`);
    if (input < 0) throw new InvalidInputError(`invalid duration ${input}: must not be negative`);
    return Math.round(input * 1000);
  }
  const text = input.trim();
  const quoted = JSON.stringify(input);
  if (text.startsWith('-')) throw new InvalidInputError(`invalid duration ${quoted}: must not be negative`);
  const match = /^(\d+(?:\.\d+)?|\.\d+)([a-zA-Z]*)$/.exec(text);
  if (!match) {
    // `1h30m` is what Go users type; the contract has one number and one unit.
    if (/^(\d+(\.\d+)?(ms|s|m|h|d)){2,}$/.test(text)) {
      throw new InvalidInputError(`invalid duration ${quoted}: use one number and one unit, e.g. "90m"`);
    }
    throw new InvalidInputError(
      `invalid duration ${quoted}: expected a number and a unit (ms, s, m, h, d), ${EXAMPLE}`,
    );
  }
  const [, amount, unit] = match;
  const factor = unit === '' ? UNIT_MS.s : UNIT_MS[unit];
  if (factor === undefined) {
    throw new InvalidInputError(`invalid duration ${quoted}: unknown unit "${unit}" (use ms, s, m, h or d)`);
  }
  const ms = Math.round(Number(amount) * factor);
  if (!Number.isSafeInteger(ms)) throw new InvalidInputError(`invalid duration ${quoted}: too long`);
  return ms;
}

/**
 * A duration spelled for people, for messages and logs: a whole unit as such (120000 → `2m`, which
 * parseDuration reads back), else rounded to what a reader needs: 250.4 → `250ms`, 1534 →
 * `1.53s`, 12345 → `12.3s`, 125400 → `2m 5s`, 5580000 → `1h 33m`. Never the float noise of a
 * subtraction (`0.036510582000000055`).
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${seconds % 60 ? ` ${seconds % 60}s` : ''}`;
  const minutes = Math.round(ms / 60_000);
  return `${Math.floor(minutes / 60)}h${minutes % 60 ? ` ${minutes % 60}m` : ''}`;
}

/**
 * A duration passed to a module function from Lua: a string such as `"5s"` or a number of seconds.
 * Errors start with `what` (`goroutine.sleep: argument 1`), as module errors do.
 */
export function parseDurationArgument(input: unknown, what: string): number {
  if (input === null || input === undefined) throw new InvalidInputError(`${what} must be a duration, got nil`);
  if (typeof input === 'number' && input < 0)
    throw new InvalidInputError(`${what} must be a non-negative duration, got ${input}`);
  if (typeof input !== 'string' && typeof input !== 'number') {
    throw new InvalidInputError(`${what} must be a duration such as "5s" or a number of seconds`);
  }
  try {
    return parseDuration(input);
  } catch (error) {
    throw new InvalidInputError(`${what}: ${(error as Error).message}`);
  }
}
