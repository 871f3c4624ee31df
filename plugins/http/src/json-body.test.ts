import { describe, expect, it } from 'vitest';
import { locateJsonError, parseJson } from './json-body.js';

describe('locateJsonError', () => {
  it.each([
    ['{"a": }', 6, 'unexpected character "}"'],
    ['[1,2,]', 5, 'unexpected character "]"'],
    ['{a:1}', 1, 'expected a property name in double quotes'],
    ['{"a" 1}', 5, "expected ':' after the property name"],
    ['{"a":1 "b":2}', 7, "expected ',' or '}' after a property value"],
    ['[1 2]', 3, "expected ',' or ']' after an array element"],
    ['{"a":1', 6, 'unexpected end of input'],
    ['"abc', 4, 'unterminated string'],
    ['"a\\x"', 2, 'invalid escape sequence in string'],
    ['"a\\u12G4"', 2, 'invalid escape sequence in string'],
    ['"tab\there"', 4, 'control character in string (escape it)'],
    ['tru', 3, 'unexpected end of input'],
    ['nul!', 3, 'unexpected character "!"'],
    ['-x', 1, 'unexpected character "x"'],
    ['{"a":1} x', 8, 'unexpected content after the JSON value'],
    ['   ', 3, 'unexpected end of input'],
  ])('%j fails at %i: %s', (text, position, reason) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(locateJsonError(text)).toEqual({ position, reason });
  });

  it('finds nothing in valid JSON', () => {
    for (const text of ['{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"]}', ' 0 ', '[]', '{}', '""']) {
      expect(JSON.parse(text)).toBeDefined();
      expect(locateJsonError(text)).toBeUndefined();
    }
  });
});

describe('parseJson', () => {
  it('names line and column of the error', () => {
    expect(() => parseJson('{\n  "a": 1,\n  "b": tru\n}')).toThrow(
      'malformed JSON at line 3, column 11 (position 22): unexpected character "\\n"',
    );
  });

  it('returns the parsed value', () => {
    expect(parseJson('{"a":[1]}')).toEqual({ a: [1] });
  });
});
