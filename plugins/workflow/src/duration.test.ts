import { InvalidInputError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['90s', 90_000],
    ['1.5h', 5_400_000],
    ['2m', 120_000],
    ['1d', 86_400_000],
    ['.5s', 500],
    ['0', 0],
    ['30', 30_000],
    ['2.5', 2_500],
    [' 10s ', 10_000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('takes a YAML number as seconds', () => {
    expect(parseDuration(30)).toBe(30_000);
    expect(parseDuration(0.25)).toBe(250);
  });

  it('rounds to whole milliseconds', () => {
    expect(parseDuration('1.0004s')).toBe(1000);
    expect(parseDuration('0.5ms')).toBe(1);
  });

  it.each([
    ['', 'invalid duration "": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"'],
    ['abc', 'invalid duration "abc": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"'],
    ['s', 'invalid duration "s": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"'],
    ['5 s', 'invalid duration "5 s": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"'],
    ['2x', 'invalid duration "2x": unknown unit "x" (use ms, s, m, h or d)'],
    ['5S', 'invalid duration "5S": unknown unit "S" (use ms, s, m, h or d)'],
    ['3w', 'invalid duration "3w": unknown unit "w" (use ms, s, m, h or d)'],
    ['1h30m', 'invalid duration "1h30m": use one number and one unit, e.g. "90m"'],
    ['-5s', 'invalid duration "-5s": must not be negative'],
    ['1e3s', 'invalid duration "1e3s": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"'],
  ])('refuses %j', (text, message) => {
    expect(() => parseDuration(text)).toThrow(new InvalidInputError(message));
  });

  it('refuses negative and non-finite numbers', () => {
    expect(() => parseDuration(-1)).toThrow('invalid duration -1: must not be negative');
    expect(() => parseDuration(Infinity)).toThrow('invalid duration Infinity: not a finite number');
  });

  it('throws InvalidInputError', () => {
    expect(() => parseDuration('x')).toThrow(InvalidInputError);
  });
});

describe('formatDuration', () => {
  it.each([
    [250, '250ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [120_000, '2m'],
    [90_000, '90s'],
    [3_600_000, '1h'],
    [86_400_000, '1d'],
    [0, '0ms'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
