import { describe, expect, expectTypeOf, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { defineRoute, reply, webSocketMessage } from './http.js';

describe('defineRoute', () => {
  it('types params, query and body from the schemas', () => {
    const route = defineRoute({
      method: 'POST',
      path: '/things/:id',
      summary: 'update a thing',
      permission: 'thing:write',
      params: Type.Object({ id: Type.String() }),
      query: Type.Object({ dry: Type.Optional(Type.Boolean()) }),
      body: Type.Object({ name: Type.String(), count: Type.Integer() }),
      responses: { 200: Type.Object({ ok: Type.Boolean() }) },
      handler: (request) => {
        expectTypeOf(request.params.id).toEqualTypeOf<string>();
        expectTypeOf(request.query.dry).toEqualTypeOf<boolean | undefined>();
        expectTypeOf(request.body).toEqualTypeOf<{ name: string; count: number }>();
        return { ok: request.body.count > 0 };
      },
    });
    expect(route.path).toBe('/things/:id');
  });

  it('leaves params and query as strings, and no body, without schemas', () => {
    defineRoute({
      method: 'GET',
      path: '/health',
      summary: 'health',
      permission: 'public',
      responses: { 200: { description: 'up' } },
      handler: (request) => {
        expectTypeOf(request.params).toEqualTypeOf<Record<string, string>>();
        expectTypeOf(request.query).toEqualTypeOf<Record<string, string>>();
        expectTypeOf(request.body).toEqualTypeOf<undefined>();
        return reply(204);
      },
    });
  });
});

describe('webSocketMessage', () => {
  it('carries seconds in timestamp and milliseconds in timestamp_ms', () => {
    expect(webSocketMessage('agent_update', { name: 'a' }, 1_700_000_000_123)).toEqual({
      type: 'agent_update',
      timestamp: 1_700_000_000,
      timestamp_ms: 1_700_000_000_123,
      data: { name: 'a' },
    });
  });
});
