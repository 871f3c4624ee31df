import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, parseDurationArgument } from './duration.js';

describe('parseDuration', () => {
  it('reads a number and a unit, or bare seconds, into whole milliseconds', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration(' 5m ')).toBe(300_000);
    expect(parseDuration('.5s')).toBe(500);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration(0.25)).toBe(250);
  });

  it('refuses what it cannot read, saying why', () => {
    expect(() => parseDuration('1h30m')).toThrow('invalid duration "1h30m": use one number and one unit, e.g. "90m"');
    expect(() => parseDuration('5 minutes')).toThrow('expected a number and a unit (ms, s, m, h, d)');
    expect(() => parseDuration('5w')).toThrow('unknown unit "w" (use ms, s, m, h or d)');
    expect(() => parseDuration('-1s')).toThrow('must not be negative');
    expect(() => parseDuration(-1)).toThrow('must not be negative');
    expect(() => parseDuration(Infinity)).toThrow('not a finite number');
    expect(() => parseDuration('99999999999999d')).toThrow('too long');
  });
});

describe('formatDuration', () => {
  it('spells a duration in its largest whole unit', () => {
    expect(formatDuration(120_000)).toBe('2m');
    expect(formatDuration(1500)).toBe('1.5s');
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(86_400_000)).toBe('1d');
    expect(parseDuration(formatDuration(5_400_000))).toBe(5_400_000);
  });

  it('rounds any other duration for people, never showing float noise', () => {
    expect(formatDuration(0.036510582 * 1000 + 1e-12)).toBe('37ms');
    expect(formatDuration(1534.2)).toBe('1.53s');
    expect(formatDuration(12_345.6)).toBe('12.3s');
    expect(formatDuration(125_400)).toBe('2m 5s');
    expect(formatDuration(5_580_000.7)).toBe('1h 33m');
  });
});

describe('parseDurationArgument', () => {
  it('takes a string or seconds from Lua, and names the argument when refusing', () => {
    expect(parseDurationArgument('5s', 'f: argument 1')).toBe(5000);
    expect(parseDurationArgument(2, 'f: argument 1')).toBe(2000);
    expect(() => parseDurationArgument(undefined, 'goroutine.sleep: argument 1')).toThrow(
      'goroutine.sleep: argument 1 must be a duration, got nil',
    );
    expect(() => parseDurationArgument(true, 'f: argument 1')).toThrow('must be a duration such as "5s"');
    expect(() => parseDurationArgument('soon', 'f: argument 1')).toThrow('f: argument 1: invalid duration "soon"');
  });
});
