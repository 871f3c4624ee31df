import { InvalidInputError } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { describe, expect, it } from 'vitest';
import { compilePart } from './route-schema.js';

const Query = Type.Object({
  status: Type.Optional(Type.String()),
  limit: Type.Integer({ minimum: 0, default: 50 }),
  verbose: Type.Optional(Type.Boolean()),
});

describe('compilePart (query)', () => {
  it('gives each request its own converted copy, also when the same strings come again', () => {
    const part = compilePart('query', Query);
    const first = part.check({ limit: '5', verbose: 'true' }) as Record<string, unknown>;
    expect(first).toEqual({ limit: 5, verbose: true });
    // A handler changing its query must not change what the next request with the same strings gets.
    first.limit = 999;
    const second = part.check({ limit: '5', verbose: 'true' });
    expect(second).toEqual({ limit: 5, verbose: true });
    expect(second).not.toBe(first);
    expect(part.check({})).toEqual({ limit: 50 });
    expect(part.check({})).toEqual({ limit: 50 });
  });

  it('refuses bad input every time, and keeps queries with a NUL apart', () => {
    const part = compilePart('query', Query);
    for (let i = 0; i < 2; i++) expect(() => part.check({ limit: '-1' })).toThrow(InvalidInputError);
    // Two different queries that would share a key if NUL were not excluded.
    expect(part.check({ status: 'a\u0000limit\u00007' })).toEqual({ status: 'a\u0000limit\u00007', limit: 50 });
    expect(part.check({ status: 'a', limit: '7' })).toEqual({ status: 'a', limit: 7 });
    expect(part.check({ status: 'a\u0000limit\u00007' })).toEqual({ status: 'a\u0000limit\u00007', limit: 50 });
  });
});
