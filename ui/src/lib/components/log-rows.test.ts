import { describe, expect, it } from 'vitest';
import { layoutRows, lineAt } from './log-rows';

describe('the rows of a virtualised log', () => {
  it('gives a message of n text lines n rows, so it does not overlap the next', () => {
    expect(layoutRows(['one', 'two\nlines', 'three\nmore\nlines', 'last'], 20)).toEqual([0, 20, 60, 120, 140]);
    expect(layoutRows([], 20)).toEqual([0]);
  });

  it('wraps a text line longer than a row holds, and puts extra rows before each message', () => {
    // 10 characters a row: 25 characters take 3 rows, "short\n" + 12 take 1 + 2.
    expect(layoutRows(['x'.repeat(25), `short\n${'y'.repeat(12)}`, 'z'.repeat(10)], 20, 10)).toEqual([0, 60, 120, 140]);
    // On a phone the time and level take a row above each message.
    expect(layoutRows(['a', 'x'.repeat(11)], 20, 10, 1)).toEqual([0, 40, 100]);
    // Extra rows by line: where each line comes from, wrapped under its time and level.
    expect(layoutRows(['a', 'b'], 20, 10, (i) => 1 + i * 2)).toEqual([0, 40, 120]);
  });

  it('finds the line at a height, inside a tall message too', () => {
    const tops = layoutRows(['a', 'b\nb', 'c'], 20);
    expect(lineAt(tops, 0)).toBe(0);
    expect(lineAt(tops, 19)).toBe(0);
    expect(lineAt(tops, 20)).toBe(1);
    expect(lineAt(tops, 59)).toBe(1);
    expect(lineAt(tops, 60)).toBe(2);
    expect(lineAt(tops, 10_000)).toBe(2);
    expect(lineAt([0], 5)).toBe(0);
  });
});
