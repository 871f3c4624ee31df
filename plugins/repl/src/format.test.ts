import type { LuaFunctionRef } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FORMAT, formatNumber, formatResults, formatValue, quote } from './format.js';

const fn: LuaFunctionRef = { kind: 'lua-function', call: async () => [] };

describe('formatResults', () => {
  it('separates values with tabs and leaves top-level strings unquoted, as lua does', () => {
    expect(formatResults([1, 'two', null, false, fn])).toBe('1\ttwo\tnil\tfalse\t<function>');
  });

  it('shows the runtime placeholders for userdata, threads and cycles as they are', () => {
    expect(formatValue({ f: '<userdata>', t: '<thread>', self: '<cycle>', s: '<text>' })).toBe(
      '{ f = <userdata>, s = "<text>", self = <cycle>, t = <thread> }',
    );
  });
});

describe('formatValue', () => {
  it('prints sequences in order and other tables with integer keys first, then names sorted', () => {
    expect(formatValue([3, 1, 2])).toBe('{ 3, 1, 2 }');
    expect(formatValue({ b: 1, a: 2, '10': 3, '2': 4, 'not id': 5, end: 6, _x: 7 })).toBe(
      '{ [2] = 4, [10] = 3, _x = 7, a = 2, b = 1, ["end"] = 6, ["not id"] = 5 }',
    );
    expect(formatValue({})).toBe('{}');
    expect(formatValue([])).toBe('{}');
  });

  it('quotes nested strings so that they read back in Lua', () => {
    expect(formatValue(['a "b"\n\\', 'tab\there', '\u0001\u00012', 'é'])).toBe(
      '{ "a \\"b\\"\\n\\\\", "tab\\there", "\\001\\0012", "é" }',
    );
    expect(quote('\u007f')).toBe('"\\127"');
  });

  it('lays long tables over indented lines when multi-line, one line otherwise', () => {
    const value = { name: 'web-frontend-1', roles: ['http', 'cache', 'metrics'], limits: { cpu: 2, memory: '512M' } };
    expect(formatValue(value, { ...DEFAULT_FORMAT, width: 40 })).toBe(
      [
        '{',
        '  limits = { cpu = 2, memory = "512M" },',
        '  name = "web-frontend-1",',
        '  roles = { "http", "cache", "metrics" }',
        '}',
      ].join('\n'),
    );
    expect(formatValue(value, { ...DEFAULT_FORMAT, width: 40, multiline: false })).toBe(
      '{ limits = { cpu = 2, memory = "512M" }, name = "web-frontend-1", roles = { "http", "cache", "metrics" } }',
    );
  });

  it('cuts tables past a depth, a count per table and a count in all', () => {
    expect(formatValue({ a: { b: { c: { d: { e: 1 } } } } })).toBe('{ a = { b = { c = { d = {...} } } } }');
    const options = { ...DEFAULT_FORMAT, maxEntries: 3, maxTotal: 5, multiline: false };
    expect(formatValue([1, 2, 3, 4, 5], options)).toBe('{ 1, 2, 3, ... 2 more }');
    // The outer table takes its share of the budget first, the nested ones what is left.
    expect(formatValue([[1, 2, 3], [4, 5, 6], [7]], options)).toBe(
      '{ { 1, 2, ... 1 more }, { ... 3 more }, { ... 1 more } }',
    );
  });
});

describe('formatNumber', () => {
  it('prints numbers as Lua 5.3 tostring does', () => {
    expect(formatNumber(42)).toBe('42');
    expect(formatNumber(-7)).toBe('-7');
    expect(formatNumber(0.1)).toBe('0.1');
    expect(formatNumber(1 / 3)).toBe('0.33333333333333');
    expect(formatNumber(2 ** 53)).toBe('9.007199254741e+15');
    expect(formatNumber(2 ** 31)).toBe('2147483648.0');
    expect(formatNumber(1e100)).toBe('1e+100');
    expect(formatNumber(1.5e-7)).toBe('1.5e-07');
    expect(formatNumber(-0)).toBe('-0.0');
    expect(formatNumber(Infinity)).toBe('inf');
    expect(formatNumber(-Infinity)).toBe('-inf');
    expect(formatNumber(NaN)).toBe('nan');
  });
});
