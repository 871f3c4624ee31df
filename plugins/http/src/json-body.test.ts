import { describe, expect, it } from 'vitest';
import { Type } from '@runner/plugin-sdk/schema';
import { locateJsonError, MAX_JSON_DEPTH, parseJson } from './json-body.js';
import { serverPerTest, testRoute } from './test-support.js';

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

describe('deeply nested bodies', () => {
  const start = serverPerTest();
  const nested = (depth: number) => `{"vars":{"a":${'['.repeat(depth)}1${']'.repeat(depth)}}}`;

  it('are refused with 400 before validation, and a body at the limit still passes', async () => {
    const { base } = await start((router) =>
      router.add(
        testRoute('POST', '/echo', (request) => ({ got: typeof request.body }), {
          body: Type.Object({ vars: Type.Record(Type.String(), Type.Unknown()) }),
        }),
      ),
    );
    const post = (text: string) =>
      fetch(`${base}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    for (const depth of [MAX_JSON_DEPTH + 1, 200_000]) {
      const refused = await post(nested(depth));
      expect(refused.status).toBe(400);
      const text = await refused.text();
      expect(JSON.parse(text).error.message).toMatch(/JSON nests deeper than 64 levels/);
      // The answer names where, it does not echo the body.
      expect(text.length).toBeLessThan(600);
    }
    expect((await post(nested(MAX_JSON_DEPTH - 2))).status).toBe(200);
  });
});

describe('error answers', () => {
  const start = serverPerTest();

  it('echo at most a short excerpt of what the client sent', async () => {
    const { base } = await start((router) =>
      router.add(
        testRoute('POST', '/strict', () => ({}), {
          body: Type.Object(
            { mode: Type.Union([Type.Literal('a'), Type.Literal('b')]) },
            { additionalProperties: false },
          ),
        }),
      ),
    );
    const post = (body: unknown) =>
      fetch(`${base}/api/v1/strict`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const long = 'x'.repeat(20_000);
    for (const body of [{ mode: long }, { mode: 'a', [long]: 1 }]) {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      const text = await answer.text();
      expect(text).toContain('xxx...');
      expect(text.length).toBeLessThan(600);
    }
  });
});
