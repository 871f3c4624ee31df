import { InvalidInputError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { loopItemsFromText } from './loop-items.js';

describe('loopItemsFromText', () => {
  it.each([
    ['web-1, web-2', ['web-1', 'web-2']],
    ['web-1,web-2', ['web-1', 'web-2']],
    ['web-1\nweb-2\n', ['web-1', 'web-2']],
    [' single ', ['single']],
    ['a,,b,', ['a', 'b']],
    ['["a", "b"]', ['a', 'b']],
    ['[a, 2, true]', ['a', 2, true]],
    ['- a\n- {name: b, port: 2}', ['a', { name: 'b', port: 2 }]],
    ['', []],
    ['  \n ', []],
    ['[]', []],
  ])('reads %j', (text, items) => {
    expect(loopItemsFromText(text)).toEqual(items);
  });

  it('treats a leading minus without a blank as text', () => {
    expect(loopItemsFromText('-5,-3')).toEqual(['-5', '-3']);
  });

  it.each([
    ['{"a": 1}', 'loop rendered a mapping, not a list: "{\\"a\\": 1}"'],
    ['[a, [b]]', 'loop item 2 must be a scalar or a mapping, found a list'],
    ['[a, null]', 'loop item 2 must be a scalar or a mapping, found null'],
  ])('refuses %j', (text, message) => {
    expect(() => loopItemsFromText(text)).toThrow(new InvalidInputError(message));
  });

  it('refuses a list that does not parse', () => {
    expect(() => loopItemsFromText('[a, b')).toThrow(/^loop rendered text that is not a list: "\[a, b": /);
  });
});
