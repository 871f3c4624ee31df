// Pre-encoded JSON answers (EncodedJson) through a real server on an ephemeral loopback port:
// bytes, headers, HEAD, ETag revalidation, masking of secrets registered later, and the guard
// chain still deciding every request before a kept body is sent.
import { encodedJson, ForbiddenError, Permissions, RedactorRef, REDACTED, UnauthorizedError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { ifNoneMatch } from './encoded-body.js';
import { serverPerTest, testRoute } from './test-support.js';

const start = serverPerTest();

const PAGE_TEXT = JSON.stringify({ executions: [{ id: 'run-1', note: 'tea for two', é: 'ünïcode' }], total: 1 });

describe('pre-encoded JSON answers', () => {
  it('send the text as UTF-8 bytes with an ETag, the same for the same object, and revalidate to 304', async () => {
    const page = encodedJson(PAGE_TEXT);
    let calls = 0;
    const r = await start((router) =>
      router.add(
        testRoute('GET', '/page', () => {
          calls++;
          return page;
        }),
      ),
    );
    const first = await fetch(`${r.base}/api/v1/page`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(first.headers.get('content-length'))).toBe(Buffer.byteLength(PAGE_TEXT));
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(await first.json()).toEqual(JSON.parse(PAGE_TEXT));
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"[\w-]+"$/);

    const again = await fetch(`${r.base}/api/v1/page`);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe(PAGE_TEXT);

    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const revalidated = await fetch(`${r.base}/api/v1/page`, { headers: { 'if-none-match': header } });
      expect(revalidated.status, header).toBe(304);
      expect(revalidated.headers.get('etag')).toBe(etag);
      expect(await revalidated.text()).toBe('');
    }
    const stale = await fetch(`${r.base}/api/v1/page`, { headers: { 'if-none-match': '"something-else"' } });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(PAGE_TEXT);
    // The handler ran for every request, 304s included: nothing is answered from a cache around it.
    expect(calls).toBe(7);
  });

  it('answer HEAD with the headers of GET and no body', async () => {
    const page = encodedJson(PAGE_TEXT);
    const r = await start((router) => router.add(testRoute('GET', '/page', () => page)));
    const head = await fetch(`${r.base}/api/v1/page`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(PAGE_TEXT));
    expect(head.headers.get('etag')).toMatch(/^"/);
    expect(await head.text()).toBe('');
  });

  it('a new object gets a new ETag, and a status other than 200 is sent without one', async () => {
    let page = encodedJson('{"n":1}');
    const r = await start((router) => {
      router.add(testRoute('GET', '/page', () => page));
      router.add(
        testRoute('POST', '/made', () => ({ kind: 'http-reply', status: 201, body: encodedJson('{"made":true}') })),
      );
    });
    const before = (await fetch(`${r.base}/api/v1/page`)).headers.get('etag') as string;
    page = encodedJson('{"n":2}');
    const after = await fetch(`${r.base}/api/v1/page`, { headers: { 'if-none-match': before } });
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ n: 2 });
    expect(after.headers.get('etag')).not.toBe(before);

    const made = await fetch(`${r.base}/api/v1/made`, { method: 'POST' });
    expect(made.status).toBe(201);
    expect(made.headers.get('etag')).toBeNull();
    expect(await made.json()).toEqual({ made: true });
  });

  it('mask a secret registered after the bytes were kept, with a new ETag', async () => {
    const page = encodedJson(JSON.stringify({ output: 'the key is hunter2-abc' }));
    const r = await start((router) => router.add(testRoute('GET', '/page', () => page)));
    const plain = await fetch(`${r.base}/api/v1/page`);
    const etag = plain.headers.get('etag') as string;
    expect(await plain.json()).toEqual({ output: 'the key is hunter2-abc' });

    const forget = r.kernel.get(RedactorRef).addSecret('hunter2-abc');
    const masked = await fetch(`${r.base}/api/v1/page`, { headers: { 'if-none-match': etag } });
    expect(masked.status).toBe(200);
    expect(await masked.json()).toEqual({ output: `the key is ${REDACTED}` });
    expect(masked.headers.get('etag')).not.toBe(etag);

    forget();
    expect(await (await fetch(`${r.base}/api/v1/page`)).json()).toEqual({ output: 'the key is hunter2-abc' });
  });

  it('are sent only after the guards passed: a refused caller gets the error, never the kept body', async () => {
    const page = encodedJson(PAGE_TEXT);
    let checks = 0;
    const r = await start((router) => {
      router.guard({
        name: 'who',
        order: 100,
        check(context) {
          checks++;
          const who = context.req.headers.authorization;
          if (who === undefined) throw new UnauthorizedError('credentials needed');
          const role = who === 'Bearer viewer' ? 'viewer' : 'nobody';
          context.principal = {
            id: role,
            name: role,
            role,
            method: 'token',
            can: (permission) => role === 'viewer' && permission === Permissions.workflowView,
          };
        },
      });
      router.guard({
        name: 'may',
        order: 200,
        check(context) {
          if (!context.principal?.can(context.route.permission))
            throw new ForbiddenError(`${context.principal?.name} may not`);
        },
      });
      router.add(testRoute('GET', '/page', () => page, { permission: Permissions.workflowView }));
    });
    const allowed = await fetch(`${r.base}/api/v1/page`, { headers: { authorization: 'Bearer viewer' } });
    expect(allowed.status).toBe(200);
    const etag = allowed.headers.get('etag') as string;
    expect(await allowed.text()).toBe(PAGE_TEXT);

    // The bytes are kept now; a caller who may not see them gets the refusal, with its ETag too.
    for (const [headers, status] of [
      [{ 'if-none-match': etag }, 401],
      [{ authorization: 'Bearer stranger', 'if-none-match': etag }, 403],
      [{ authorization: 'Bearer stranger' }, 403],
    ] as const) {
      const refused = await fetch(`${r.base}/api/v1/page`, { headers });
      expect(refused.status).toBe(status);
      expect(refused.headers.get('etag')).toBeNull();
      const text = await refused.text();
      expect(text).not.toContain('run-1');
      expect(JSON.parse(text).error).toBeTruthy();
    }
    expect(checks).toBe(4);
  });
});

describe('ifNoneMatch', () => {
  it('compares each listed tag weakly and honours *', () => {
    expect(ifNoneMatch(undefined, '"a"')).toBe(false);
    expect(ifNoneMatch('"a"', '"a"')).toBe(true);
    expect(ifNoneMatch('W/"a"', '"a"')).toBe(true);
    expect(ifNoneMatch(' "b" ,W/"a"', '"a"')).toBe(true);
    expect(ifNoneMatch('"b", "c"', '"a"')).toBe(false);
    expect(ifNoneMatch(' * ', '"a"')).toBe(true);
    expect(ifNoneMatch('a', '"a"')).toBe(false);
    expect(ifNoneMatch(['"b"', '"a"'], '"a"')).toBe(true);
  });
});
