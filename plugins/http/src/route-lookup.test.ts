// Routes without path parameters are found by a map read; these check that the route answering
// is the one polka's pattern walk would have run, over a real server on a loopback port.
import { Type } from '@runner/plugin-sdk/schema';
import { describe, expect, it } from 'vitest';
import { serverPerTest, testRoute } from './test-support.js';

const start = serverPerTest();

describe('route lookup', () => {
  it('answers a fixed path with its query and no params, for GET, HEAD and with a trailing slash', async () => {
    const r = await start((router) =>
      router.add(
        testRoute('GET', '/things', (req) => ({ query: req.query, params: req.params, path: req.path }), {
          query: Type.Object({ n: Type.Optional(Type.Integer()), tag: Type.Optional(Type.String()) }),
        }),
      ),
    );
    const answer = await fetch(`${r.base}/api/v1/things?n=3&tag=a%20b&tag=second`);
    expect(await answer.json()).toEqual({ query: { n: 3, tag: 'a b' }, params: {}, path: '/things' });
    expect(await (await fetch(`${r.base}/api/v1/things/`)).json()).toMatchObject({ query: {}, params: {} });
    const head = await fetch(`${r.base}/api/v1/things`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const bad = await fetch(`${r.base}/api/v1/things?n=many`);
    expect(bad.status).toBe(400);
    const wrongMethod = await fetch(`${r.base}/api/v1/things`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
  });

  it('keeps the registration order where a parameter route also matches the fixed path', async () => {
    const r = await start((router) => {
      router.add(testRoute('GET', '/early', () => 'fixed route'));
      router.add(testRoute('GET', '/:name', (req) => `param route for ${req.params.name}`));
      router.add(testRoute('GET', '/late', () => 'fixed route'));
    });
    // Added before the parameter route: it answers. Added after: the parameter route was first.
    expect(await (await fetch(`${r.base}/api/v1/early`)).json()).toBe('fixed route');
    expect(await (await fetch(`${r.base}/api/v1/late`)).json()).toBe('param route for late');
    expect(await (await fetch(`${r.base}/api/v1/other`)).json()).toBe('param route for other');
  });
});
