import { describe, expect, it } from 'vitest';
import { formatValue, goQuote, sprint, sprintf } from './format.js';

describe('sprintf', () => {
  const cases: [string, unknown[], string][] = [
    ['%d|%5d|%-5d|%05d|%+d', [7, 7, 7, -7, 7], '7|    7|7    |-0007|+7'],
    ['%x %X %#x %o %b %c', [255, 255, 255, 8, 5, 65], 'ff FF 0xff 10 101 A'],
    [
      '%f %.2f %8.3f %e %g %G',
      [1.5, 2.345, 3.14159, 1500000, 0.5, 1e21],
      '1.500000 2.35    3.142 1.500000e+06 0.5 1E+21',
    ],
    ['%s %.2s %q %v %t', ['abc', 'abc', 'a"b\n', null, false], 'abc ab "a\\"b\\n"  false'],
    ['%v %v %#v', [[1, 'a'], { b: 2, a: [true] }, 'x'], '[1 a] map[a:[true] b:2] "x"'],
    ['%d %t %z', ['x', 1, 2], '%!d(string=x) %!t(int=1) %!z(int=2)'],
    ['100%% %d', [], '100% %!d(MISSING)'],
    ['%', [], '%!(NOVERB)'],
  ];
  it.each(cases)('%s', (format, args, expected) => {
    expect(sprintf(format, args)).toBe(expected);
  });
});

describe('values as Go prints them', () => {
  it('formats scalars, lists, maps and nil', () => {
    expect(formatValue(3)).toBe('3');
    expect(formatValue(0.25)).toBe('0.25');
    expect(formatValue(null)).toBe('');
    expect(formatValue([null, 'a'])).toBe('[<nil> a]');
    expect(formatValue({ z: 1, a: { k: 'v' } })).toBe('map[a:map[k:v] z:1]');
  });

  it('print puts spaces only between non-strings; quote escapes like strconv.Quote', () => {
    expect(sprint(['a', 1, 2, 'b', true])).toBe('a1 2btrue');
    expect(goQuote('tab\there\x01')).toBe('"tab\\there\\x01"');
  });
});
