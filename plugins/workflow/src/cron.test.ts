import { InvalidInputError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { parseCron } from './cron.js';

const range = (from: number, to: number, step = 1) => {
  const out: number[] = [];
  for (let n = from; n <= to; n += step) out.push(n);
  return out;
};

describe('parseCron', () => {
  it('expands stars to every value of each field', () => {
    expect(parseCron('* * * * *')).toEqual({
      expression: '* * * * *',
      minutes: range(0, 59),
      hours: range(0, 23),
      daysOfMonth: range(1, 31),
      months: range(1, 12),
      daysOfWeek: range(0, 6),
      dayOfMonthStar: true,
      dayOfWeekStar: true,
    });
  });

  it('expands lists, ranges and steps', () => {
    const s = parseCron('*/15 9-17 1,15 */3 1-5');
    expect(s.minutes).toEqual([0, 15, 30, 45]);
    expect(s.hours).toEqual(range(9, 17));
    expect(s.daysOfMonth).toEqual([1, 15]);
    expect(s.months).toEqual([1, 4, 7, 10]);
    expect(s.daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(s.dayOfMonthStar).toBe(false);
    expect(s.dayOfWeekStar).toBe(false);
  });

  it('reads a stepped range, a value with a step, and overlapping lists once each', () => {
    const s = parseCron('0-30/10 5/6 1-3,2-4 * *');
    expect(s.minutes).toEqual([0, 10, 20, 30]);
    expect(s.hours).toEqual([5, 11, 17, 23]);
    expect(s.daysOfMonth).toEqual([1, 2, 3, 4]);
  });

  it('reads month and day names in any case', () => {
    const s = parseCron('0 0 * JAN,jun-aug mon-fri');
    expect(s.months).toEqual([1, 6, 7, 8]);
    expect(s.daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron('0 0 * * sun').daysOfWeek).toEqual([0]);
  });

  it('tolerates extra blanks between fields', () => {
    expect(parseCron('  5   4 * * 0 ').minutes).toEqual([5]);
  });

  it.each([
    ['* * * *', 'expected 5 fields (minute hour day-of-month month day-of-week), found 4'],
    ['* * * * * *', 'expected 5 fields (minute hour day-of-month month day-of-week), found 6'],
    ['', 'expected 5 fields (minute hour day-of-month month day-of-week), found 0'],
    ['60 * * * *', 'minute: 60 is out of range 0-59'],
    ['* 24 * * *', 'hour: 24 is out of range 0-23'],
    ['* * 0 * *', 'day-of-month: 0 is out of range 1-31'],
    ['* * * 13 *', 'month: 13 is out of range 1-12'],
    ['* * * * 7', 'day-of-week: 7 is out of range 0-6 (Sunday is 0)'],
    ['a * * * *', 'minute: "a" is not a number'],
    ['* * * foo *', 'month: "foo" is not a number or a name (jan-dec)'],
    ['* * * * funday', 'day-of-week: "funday" is not a number or a name (sun-sat)'],
    ['*/0 * * * *', 'minute: step must be a positive integer, found "0"'],
    ['*/x * * * *', 'minute: step must be a positive integer, found "x"'],
    ['1/2/3 * * * *', 'minute: "1/2/3" has more than one step'],
    ['* 5-1 * * *', 'hour: range 5-1 is reversed'],
    ['* * 1,,2 * *', 'day-of-month: empty list item in "1,,2"'],
    ['* * * 1- *', 'month: "1-" is not a range'],
    ['-1 * * * *', 'minute: "-1" is not a range'],
  ])('refuses %j naming the field', (expression, detail) => {
    expect(() => parseCron(expression)).toThrow(
      new InvalidInputError(`invalid cron expression ${JSON.stringify(expression)}: ${detail}`),
    );
  });
});
