// The router's extension points as a plugin uses them: guards, static mounts, plain routes and
// the OpenAPI document, against a real server on an ephemeral loopback port.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ForbiddenError, Permissions, UnauthorizedError, type GuardContext } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ApiRouter } from './router.js';
import { serverPerTest, testRoute } from './test-support.js';

const start = serverPerTest();

function uiDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'http-static-'));
  mkdirSync(join(dir, '_app/immutable'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>runner</title>');
  writeFileSync(join(dir, '_app/immutable/app.abc123.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  writeFileSync(join(dir, 'favicon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  return dir;
}

describe('guards', () => {
  it('run in order on every API route, see its metadata, and hand the principal to the handler', async () => {
    const seen: string[] = [];
    const finished: number[] = [];
    const r = await start((router) => {
      router.guard({
        name: 'audit',
        order: 300,
        check: (ctx) => {
          seen.push(`audit ${ctx.route.method} ${ctx.route.path} ${ctx.principal?.name}`);
          ctx.onFinish((status) => finished.push(status));
        },
      });
      router.guard({
        name: 'auth',
        order: 100,
        check: (ctx: GuardContext) => {
          seen.push(`auth ${ctx.route.permission} mutating=${ctx.route.mutating}`);
          if (ctx.req.headers.authorization !== 'Bearer good') throw new UnauthorizedError('credentials needed');
          ctx.principal = { id: 'u1', name: 'ada', role: 'admin', method: 'token', can: () => true };
        },
      });
      router.add(
        testRoute('POST', '/things', (req) => ({ who: req.principal?.name }), {
          permission: Permissions.workflowExecute,
          body: Type.Object({ n: Type.Integer() }),
        }),
      );
    });
    const refused = await fetch(`${r.base}/api/v1/things`, { method: 'POST', body: '{"n":1}' });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    const ok = await fetch(`${r.base}/api/v1/things`, {
      method: 'POST',
      headers: { authorization: 'Bearer good', 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    expect(await ok.json()).toEqual({ who: 'ada' });
    expect(seen).toEqual([
      'auth workflow:execute mutating=true',
      'auth workflow:execute mutating=true',
      'audit POST /api/v1/things ada',
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finished).toEqual([200]);
  });

  it('guard the WebSocket upgrade, plain routes and static files too', async () => {
    const dir = uiDir();
    const kinds: string[] = [];
    const r = await start((router) => {
      router.guard({
        name: 'deny',
        order: 100,
        check: (ctx) => {
          kinds.push(ctx.route.kind);
          if (ctx.req.headers['x-let-in'] !== 'yes') throw new ForbiddenError(`needs ${ctx.route.permission}`);
        },
      });
      router.plain({
        method: 'GET',
        path: '/metrics',
        summary: 'metrics',
        permission: Permissions.metricsView,
        handler: (_req, res) => void res.end('up 1\n'),
      });
      router.mountStatic({ prefix: '/', dir, spaFallback: 'index.html', permission: Permissions.public });
    });
    expect((await fetch(`${r.base}/metrics`)).status).toBe(403);
    expect(await (await fetch(`${r.base}/metrics`, { headers: { 'x-let-in': 'yes' } })).text()).toBe('up 1\n');
    expect((await fetch(`${r.base}/`)).status).toBe(403);
    const upgrade = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${r.port}/api/v1/ws`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
    });
    expect(upgrade).toBe(403);
    expect(new Set(kinds)).toEqual(new Set(['plain', 'static', 'websocket']));
  });
});

describe('static mounts', () => {
  it('serve built files with cache headers, compression, 304s and the SPA fallback', async () => {
    const dir = uiDir();
    const r = await start((router) =>
      router.mountStatic({
        prefix: '/',
        dir,
        spaFallback: 'index.html',
        immutablePrefix: '/_app/immutable/',
        permission: Permissions.public,
      }),
    );
    const page = await fetch(`${r.base}/executions/abc?tab=log`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<title>runner</title>');

    const asset = await fetch(`${r.base}/_app/immutable/app.abc123.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('gzip');
    expect((await asset.text()).length).toBeGreaterThan(4000); // fetch decodes it
    const raw = await new Promise<Buffer>((resolve) =>
      get(`${r.base}/_app/immutable/app.abc123.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
      }),
    );
    expect(gunzipSync(raw).toString()).toContain('console.log');

    const etag = page.headers.get('etag') as string;
    expect((await fetch(`${r.base}/`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    // A missing hashed asset or file with an extension is a 404, never the app page.
    expect((await fetch(`${r.base}/_app/immutable/gone.js`)).status).toBe(404);
    expect((await fetch(`${r.base}/missing.css`)).status).toBe(404);
    expect((await fetch(`${r.base}/favicon.png`)).headers.get('content-type')).toBe('image/png');
    // Nothing outside the directory, however the path is spelt.
    const traversal = await new Promise<number>((resolve) =>
      request({ host: '127.0.0.1', port: r.port, path: '/%2e%2e/%2e%2e/etc/passwd' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).end(),
    );
    expect(traversal).toBe(404);
    // Unknown API paths still answer JSON.
    const api = await fetch(`${r.base}/api/v1/nothing`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await fetch(`${r.base}/`, { method: 'POST' })).status).toBe(405);
  });
});

describe('declarations', () => {
  it('are refused at setup when a permission, summary or param schema is missing', async () => {
    await start((router) => {
      expect(() => router.add({ ...testRoute('GET', '/x', () => 1), permission: '' as never })).toThrow(
        'declares no permission',
      );
      expect(() =>
        router.add(testRoute('GET', '/x/:id', () => 1, { params: Type.Object({ other: Type.String() }) })),
      ).toThrow('params schema lacks id');
      expect(() =>
        router.plain({ method: 'GET', path: '/api/v1/x', summary: 's', permission: 'public', handler() {} }),
      ).toThrow('outside /api/');
    });
  });

  it('every route and plain route is in the OpenAPI document, with the query and body schemas', async () => {
    const r = await start((router) => {
      router.add(
        testRoute('GET', '/items/:id', () => ({}), {
          params: Type.Object({ id: Type.String() }),
          query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) }),
        }),
      );
      router.plain({ method: 'GET', path: '/metrics', summary: 'metrics', permission: 'metrics:view', handler() {} });
    });
    const doc = (await (await fetch(`${r.base}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    for (const route of (r.router as ApiRouter).routes()) {
      if (route.kind === 'websocket' || route.kind === 'static') continue;
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/api/v1/items/{id}']?.get?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'query:limit',
    ]);
    const bad = await fetch(`${r.base}/api/v1/items/7?limit=0`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe('limit');
  });
});
