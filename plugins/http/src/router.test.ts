import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { ConflictError, InvalidInputError, NotFoundError, reply, type HttpRequest } from '@runner/plugin-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttp, type RunningHttp, testRoute } from './test-support.js';

const running: RunningHttp[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.kernel.stop();
});

async function start(config: Record<string, unknown> = {}): Promise<RunningHttp> {
  const r = await startHttp(config, (router) => {
    router.add(
      testRoute('POST', '/things', (req) => {
        const body = req.body as { name?: unknown } | undefined;
        if (typeof body?.name !== 'string') throw new InvalidInputError('name must be a string', { field: 'name' });
        if (body.name === 'taken') throw new ConflictError('a thing named "taken" exists already');
        return reply(201, { name: body.name }, { location: `/api/v1/things/${body.name}` });
      }),
    );
    router.add(
      testRoute('GET', '/things/:name', (req) => {
        if (req.params.name === 'missing') throw new NotFoundError('thing "missing" does not exist');
        return { name: req.params.name, query: req.query, method: req.method, path: req.path };
      }),
    );
    router.add(testRoute('DELETE', '/things/:name', () => undefined));
    router.add(testRoute('POST', '/echo', (req: HttpRequest) => ({ body: req.body ?? null })));
    router.add(testRoute('POST', '/tiny', (req) => ({ body: req.body }), { bodyLimitBytes: 10 }));
    router.add(
      testRoute('GET', '/boom', () => {
        throw new Error('connect ECONNREFUSED db password=hunter2 at /srv/secret.db');
      }),
    );
    router.add(testRoute('GET', '/bigint', () => ({ n: 1n })));
  });
  running.push(r);
  return r;
}

async function json(response: Response): Promise<any> {
  const text = await response.text();
  return text === '' ? undefined : JSON.parse(text);
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * A request over node:http, for bodies fetch cannot send (a declared length it never fulfils,
 * a chunked body that never ends). `send` writes what it likes; the answer may come before the
 * body is complete.
 */
function rawRequest(
  port: number,
  options: { method: string; path: string; headers?: Record<string, string | number> },
  send: (write: (chunk: string) => void, end: () => void) => void,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: options.method, path: options.path, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined });
          req.destroy();
        });
      },
    );
    // Writes after the server answered and closed may fail; the answer is what is asserted.
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    // Node holds the headers back until the first write otherwise.
    req.flushHeaders();
    send(
      (chunk) => req.write(chunk),
      () => req.end(),
    );
  });
}

describe('health', () => {
  it('answers with status and uptime only to a caller without credentials (no version, profile or plugins)', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = await json(response);
    expect(body).toEqual({ status: 'ok', uptime_seconds: expect.any(Number) });
    expect(Number.isInteger(body.uptime_seconds)).toBe(true);
  });

  it('answers HEAD on a GET route with headers only', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/health`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await response.text()).toBe('');
  });
});

describe('handlers', () => {
  it('passes params, query and the path below /api/v1; a returned body is 200', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/things/web%201?limit=5&tag=a&tag=b`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      name: 'web 1',
      query: { limit: '5', tag: 'a' },
      method: 'GET',
      path: '/things/web%201',
    });
  });

  it('sends an HttpReply with its status and headers, and undefined as 204', async () => {
    const { base } = await start();
    const created = await fetch(`${base}/api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"a"}',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/api/v1/things/a');
    expect(await json(created)).toEqual({ name: 'a' });

    const deleted = await fetch(`${base}/api/v1/things/a`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
  });

  it('parses a JSON body with a charset and an +json type; no body is undefined', async () => {
    const { base } = await start();
    const withCharset = await fetch(`${base}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: '{"a":[1,"é"]}',
    });
    expect(await json(withCharset)).toEqual({ body: { a: [1, 'é'] } });
    const plusJson = await fetch(`${base}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"b":true}',
    });
    expect(await json(plusJson)).toEqual({ body: { b: true } });
    const none = await fetch(`${base}/api/v1/echo`, { method: 'POST' });
    expect(await json(none)).toEqual({ body: null });
  });

  it('keeps a well-formed client request id and replaces one that is not', async () => {
    const { base } = await start();
    const kept = await fetch(`${base}/api/v1/health`, { headers: { 'x-request-id': 'cli-42.a' } });
    expect(kept.headers.get('x-request-id')).toBe('cli-42.a');
    const replaced = await fetch(`${base}/api/v1/health`, { headers: { 'x-request-id': 'bad id\twith tab' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs each request at debug with method, path, status and duration in seconds', async () => {
    const r = await start();
    const response = await fetch(`${r.base}/api/v1/things/x?token=s3cr3t`);
    await response.text();
    const id = response.headers.get('x-request-id');
    // The line is written when the response closes, which can trail the client's read; a stop
    // waits for every connection, so the line exists once it resolved.
    await r.kernel.stop();
    const line = r.kernel.logs.find((l) => l.fields.request_id === id);
    expect(line).toMatchObject({
      level: 'debug',
      message: 'http request',
      fields: { method: 'GET', path: '/api/v1/things/x', status: 200 },
    });
    expect(line?.fields.duration).toBeTypeOf('number');
    expect(line?.fields.duration as number).toBeLessThan(5);
    expect(JSON.stringify(line)).not.toContain('s3cr3t');
  });

  it('refuses a second route with the same method and shape', async () => {
    const { router } = await start();
    expect(() => router.add(testRoute('GET', '/things/:other', () => ({})))).toThrow(
      'GET /api/v1/things/:other is already registered',
    );
  });
});

describe('errors', () => {
  it('400 for malformed JSON, naming line, column and position', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{\n  "name": }',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await json(response)).toEqual({
      error: {
        code: 'invalid_input',
        message: `malformed JSON at line 2, column 11 (position 12): unexpected character "}"`,
        details: { line: 2, column: 11, position: 12 },
      },
    });
  });

  it('400 naming the field when a handler rejects a value', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": 42}',
    });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      error: { code: 'invalid_input', message: 'name must be a string', field: 'name' },
    });
  });

  it('400 for a body that is not UTF-8', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([0x22, 0xff, 0x22]),
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toEqual({ code: 'invalid_input', message: 'request body is not valid UTF-8' });
  });

  it('404 for an unknown route, inside and outside /api/v1', async () => {
    const { base } = await start();
    const inside = await fetch(`${base}/api/v1/nothing/here`);
    expect(inside.status).toBe(404);
    expect(await json(inside)).toEqual({
      error: { code: 'not_found', message: 'no route for GET /api/v1/nothing/here' },
    });
    const outside = await fetch(`${base}/favicon.ico`);
    expect(outside.status).toBe(404);
    expect((await json(outside)).error.code).toBe('not_found');
  });

  it('404 for an unknown resource thrown by a handler', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/things/missing`);
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({ error: { code: 'not_found', message: 'thing "missing" does not exist' } });
  });

  it('405 with an Allow header for a known path and another method', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/health`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await json(response)).toEqual({
      error: {
        code: 'method_not_allowed',
        message: 'PUT is not allowed on /api/v1/health; allowed: GET, HEAD, OPTIONS',
        details: { allowed: ['GET', 'HEAD', 'OPTIONS'] },
      },
    });
    const things = await fetch(`${base}/api/v1/things/a`, { method: 'PATCH' });
    expect(things.status).toBe(405);
    expect(things.headers.get('allow')).toBe('GET, HEAD, DELETE, OPTIONS');
  });

  it('409 for a conflict', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"taken"}',
    });
    expect(response.status).toBe(409);
    expect(await json(response)).toEqual({
      error: { code: 'conflict', message: 'a thing named "taken" exists already' },
    });
  });

  it('413 for a declared length over the limit, before any of the body is sent', async () => {
    const { port } = await start({ 'http.body_limit': 1024 });
    // Ten megabytes are announced and none is written: only an answer from the headers alone can arrive.
    const answer = await rawRequest(
      port,
      {
        method: 'POST',
        path: '/api/v1/echo',
        headers: { 'content-type': 'application/json', 'content-length': 10 * 1024 * 1024 },
      },
      () => {},
    );
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({
      error: {
        code: 'payload_too_large',
        message: 'request body exceeds the limit of 1024 bytes',
        details: { limit_bytes: 1024 },
      },
    });
  });

  it('413 for a streamed body as soon as it passes the limit', async () => {
    const { port } = await start({ 'http.body_limit': 1024 });
    // Chunked, never ended: the answer can only come from the server stopping at the limit.
    const answer = await rawRequest(
      port,
      { method: 'POST', path: '/api/v1/echo', headers: { 'content-type': 'application/json' } },
      (write) => {
        write(`[${'1,'.repeat(400)}`);
        write('1,'.repeat(400));
      },
    );
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body.error.code).toBe('payload_too_large');
  });

  it('413 against a route with its own smaller limit', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/tiny`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":"0123456789"}',
    });
    expect(response.status).toBe(413);
    expect((await json(response)).error.details).toEqual({ limit_bytes: 10 });
  });

  it('415 for a body that is not JSON, or has no content type', async () => {
    const { base, port } = await start();
    const text = await fetch(`${base}/api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'name=a',
    });
    expect(text.status).toBe(415);
    expect(await json(text)).toEqual({
      error: {
        code: 'unsupported_media_type',
        message: 'request body must be JSON (content-type application/json, UTF-8); got "text/plain"',
      },
    });
    const latin1 = await fetch(`${base}/api/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=latin1' },
      body: '{}',
    });
    expect(latin1.status).toBe(415);
    const none = await rawRequest(
      port,
      { method: 'POST', path: '/api/v1/things', headers: { 'content-length': 2 } },
      (write, end) => {
        write('{}');
        end();
      },
    );
    expect(none.status).toBe(415);
    expect(none.body.error.message).toContain('no content-type');
  });

  it('500 with a generic message and the request id; the real error only in the log', async () => {
    const r = await start();
    const response = await fetch(`${r.base}/api/v1/boom`);
    expect(response.status).toBe(500);
    const id = response.headers.get('x-request-id') as string;
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: 'internal_error', message: `internal error (request id ${id})`, details: { request_id: id } },
    });
    for (const leak of ['hunter2', 'secret.db', 'ECONNREFUSED', 'router.test', '    at '])
      expect(text).not.toContain(leak);
    const logged = r.kernel.logs.find((l) => l.level === 'error' && l.fields.request_id === id);
    expect(logged?.message).toContain('GET /api/v1/boom failed: connect ECONNREFUSED db password=hunter2');
    expect(logged?.fields.stack).toContain('router.test');
  });

  it('500 when a handler returns a body that cannot be encoded', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/bigint`);
    expect(response.status).toBe(500);
    expect((await json(response)).error.code).toBe('internal_error');
  });
});

describe('CORS', () => {
  it('allows every origin with http.cors_origins [*] and answers a preflight with the methods of the path', async () => {
    const { base } = await start({ 'http.cors_origins': ['*'] });
    const simple = await fetch(`${base}/api/v1/health`, { headers: { origin: 'https://anywhere.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('*');
    expect(simple.headers.get('access-control-expose-headers')).toBe('x-request-id');

    const preflight = await fetch(`${base}/api/v1/things`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://anywhere.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type, authorization');
    expect(preflight.headers.get('access-control-max-age')).toBe('600');
    expect(preflight.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers a preflight for an unknown path with 404', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/v1/nope`, {
      method: 'OPTIONS',
      headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' },
    });
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('not_found');
  });

  it('with an origin list, echoes a listed origin and refuses the preflight of another', async () => {
    const { base } = await start({ 'http.cors_origins': ['https://ui.example'] });
    const listed = await fetch(`${base}/api/v1/health`, { headers: { origin: 'https://ui.example' } });
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://ui.example');
    expect(listed.headers.get('vary')).toBe('Origin');

    const other = await fetch(`${base}/api/v1/health`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const preflight = await fetch(`${base}/api/v1/things`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(await json(preflight)).toEqual({
      error: { code: 'forbidden', message: 'origin https://evil.example is not allowed (config http.cors_origins)' },
    });
  });
});
