// The API pipeline answers synchronously where every step allows it and falls back to promises
// where one needs them; both ways must keep the same order (guards before the body) and answers.
// Over a real server on a loopback port.
import { request } from 'node:http';
import { ForbiddenError } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { describe, expect, it } from 'vitest';
import { GuardChain } from './guard-chain.js';
import { QueryStrings } from './request-parts.js';
import { serverPerTest, testRoute } from './test-support.js';

const start = serverPerTest();

describe('API dispatch', () => {
  it('runs synchronous and asynchronous guards in order, with the principal of the last', async () => {
    const seen: string[] = [];
    const r = await start((router) => {
      router.guard({ name: 'sync-first', order: 1, check: () => void seen.push('sync-first') });
      router.guard({
        name: 'async-second',
        order: 2,
        check: async (context) => {
          await new Promise((resolve) => setImmediate(resolve));
          seen.push('async-second');
          context.principal = { name: 'later', role: 'admin', can: () => true } as never;
        },
      });
      router.guard({ name: 'sync-third', order: 3, check: () => void seen.push('sync-third') });
      router.add(testRoute('GET', '/who', (req) => ({ who: req.principal?.name })));
    });
    const answer = await fetch(`${r.base}/api/v1/who`);
    expect(await answer.json()).toEqual({ who: 'later' });
    expect(seen).toEqual(['sync-first', 'async-second', 'sync-third']);
  });

  it('answers a refusal thrown by a synchronous guard, or by one after an asynchronous guard, and never calls the handler', async () => {
    let calls = 0;
    const r = await start((router) => {
      router.guard({
        name: 'maybe-async',
        order: 1,
        check: (context) => (context.req.headers['x-wait'] ? Promise.resolve() : undefined),
      });
      router.guard({
        name: 'refuse',
        order: 2,
        check: (context) => {
          if (context.req.headers['x-refuse']) throw new ForbiddenError('refused by the test guard');
        },
      });
      router.add(testRoute('POST', '/thing', () => ++calls));
    });
    for (const headers of [{ 'x-refuse': '1' }, { 'x-refuse': '1', 'x-wait': '1' }] as Record<string, string>[]) {
      const answer = await fetch(`${r.base}/api/v1/thing`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(answer.status).toBe(403);
      expect(await answer.json()).toMatchObject({ error: { message: 'refused by the test guard' } });
    }
    expect(calls).toBe(0);
    const ok = await fetch(`${r.base}/api/v1/thing`, { method: 'POST', headers: { 'x-wait': '1' } });
    expect(await ok.json()).toBe(1);
  });

  it('answers a synchronous handler error, a rejected handler and a body read after the guards alike', async () => {
    const r = await start((router) => {
      router.add(
        testRoute('GET', '/throws', () => {
          throw new ForbiddenError('thrown at once');
        }),
      );
      router.add(testRoute('GET', '/rejects', async () => Promise.reject(new ForbiddenError('rejected later'))));
      router.add(
        testRoute('POST', '/echo', (req) => ({ body: req.body }), {
          body: Type.Object({ n: Type.Integer() }),
        }),
      );
    });
    for (const [path, message] of [
      ['/throws', 'thrown at once'],
      ['/rejects', 'rejected later'],
    ]) {
      const answer = await fetch(`${r.base}/api/v1${path}`);
      expect(answer.status).toBe(403);
      expect(await answer.json()).toMatchObject({ error: { message } });
    }
    const echoed = await fetch(`${r.base}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 4 }),
    });
    expect(await echoed.json()).toEqual({ body: { n: 4 } });
    const missing = await fetch(`${r.base}/api/v1/echo`, { method: 'POST' });
    expect(missing.status).toBe(400);
  });

  it('keeps the connection of a request without a body open when answering it in the turn it arrived', async () => {
    const r = await start((router) => router.add(testRoute('GET', '/quick', () => ({ ok: true }))));
    const connection = await new Promise<string | undefined>((resolve, reject) => {
      const req = request(`${r.base}/api/v1/quick`, { headers: { connection: 'keep-alive' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers.connection));
      });
      req.on('error', reject);
      req.end();
    });
    expect(connection).toBe('keep-alive');
  });

  it('gives each request its own copy of a query parsed once', async () => {
    const r = await start((router) =>
      router.add(
        testRoute('GET', '/mutates', (req) => {
          const before = { ...req.query };
          (req.query as Record<string, unknown>).tag = 'changed by the handler';
          return before;
        }),
      ),
    );
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${r.base}/api/v1/mutates?tag=a&tag=b&x=%20y`);
      expect(await answer.json()).toEqual({ tag: 'a', x: ' y' });
    }
  });
});

describe('QueryStrings', () => {
  it('parses as node:querystring does, keeps the parse per string, and shares no mutable object', () => {
    const queries = new QueryStrings();
    const first = queries.of('?status=succeeded&tag=a&tag=b&q=a+b%21');
    expect(first).toEqual({ status: 'succeeded', tag: ['a', 'b'], q: 'a b!' });
    expect(queries.of('?status=succeeded&tag=a&tag=b&q=a+b%21')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(queries.of('')).toEqual({});
    expect(queries.of('?')).toEqual({});
  });
});

describe('GuardChain.runNow', () => {
  it('returns the principal without a promise when every guard is synchronous', () => {
    const chain = new GuardChain();
    chain.add({ name: 'a', order: 1, check: (c) => void (c.principal = { name: 'now' } as never) });
    const result = chain.runNow(
      { method: 'GET', path: '/x' } as never,
      { socket: {} } as never,
      'id',
      { on: () => undefined },
      () => 200,
    );
    expect(result).toEqual({ name: 'now' });
  });
});
