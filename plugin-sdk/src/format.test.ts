import { describe, expect, it } from 'vitest';
import { formatBytes, messageOf, roundSeconds } from './format.js';
import { sleep } from './sleep.js';

describe('formatBytes', () => {
  it('uses binary units with one decimal under 10', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MiB');
    expect(formatBytes(3 * 1024 ** 5)).toBe('3.0 PiB');
    expect(formatBytes(Number.NaN)).toBe('-');
  });
});

describe('messageOf', () => {
  it('reads an Error or stringifies anything else', () => {
    expect(messageOf(new TypeError('bad'))).toBe('bad');
    expect(messageOf('plain')).toBe('plain');
    expect(messageOf(42)).toBe('42');
  });
});

describe('sleep', () => {
  it('resolves true after the time and false when aborted, before or during', async () => {
    expect(await sleep(1)).toBe(true);
    const aborted = new AbortController();
    aborted.abort();
    expect(await sleep(60_000, aborted.signal)).toBe(false);
    const later = new AbortController();
    const sleeping = sleep(60_000, later.signal);
    later.abort();
    expect(await sleeping).toBe(false);
  });
});

describe('roundSeconds', () => {
  it('keeps microseconds and drops the float noise of a subtraction', () => {
    expect(roundSeconds(0.036510582000000055)).toBe(0.036511);
    expect(roundSeconds(1.5)).toBe(1.5);
    expect(roundSeconds(0)).toBe(0);
    expect(JSON.stringify({ duration: roundSeconds(2.0000004999) })).toBe('{"duration":2}');
  });
});
