import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet, httpPost, MAX_BODY_BYTES } from './http.js';
import { callContext, closedPort, startServer, type TestServer } from './test-support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    '/json': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world","n":[1,2]}'),
    '/text': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('plain words'),
    '/missing': (_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here'),
    '/broken': (_req, res) =>
      res.writeHead(500, { 'content-type': 'application/problem+json' }).end('{"title":"boom"}'),
    '/bad-json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{not json'),
    '/latin1': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' })
        .end(Buffer.from([0x63, 0x61, 0x66, 0xe9])),
    '/cookies': (_req, res) =>
      res
        .writeHead(200, [
          ['set-cookie', 'a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT'],
          ['set-cookie', 'b=2'],
          ['x-custom', 'yes'],
        ])
        .end(),
    '/redirect': (_req, res) => res.writeHead(302, { location: '/json' }).end(),
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(Buffer.alloc(MAX_BODY_BYTES + 4096, 0x61));
    },
    '/slow': () => {
      // Never answers: the client's time limit or cancellation has to end the request.
    },
    '/echo': (req, res, body) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8') }));
    },
  });
});

afterAll(() => server.close());

describe('net.get', () => {
  it('returns status, headers, body and decoded JSON', async () => {
    const { call, lines } = callContext();
    const r = (await httpGet(call, server.url('/json'), undefined)) as Record<string, any>;
    expect(r).toMatchObject({ status: 200, ok: true, body: '{"hello":"world","n":[1,2]}', truncated: false });
    expect(r.json).toEqual({ hello: 'world', n: [1, 2] });
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.duration).toBeGreaterThanOrEqual(0);
    expect(r.duration).toBeLessThan(30);
    expect(lines.some((l) => l.level === 'debug' && l.message.includes('answered 200'))).toBe(true);
  });

  it('does not raise on an HTTP error status', async () => {
    const { call } = callContext();
    const r = (await httpGet(call, server.url('/missing'), null)) as Record<string, any>;
    expect(r).toMatchObject({ status: 404, ok: false, body: 'nothing here', status_text: 'Not Found' });
    expect(r.json).toBeUndefined();
    const problem = (await httpGet(call, server.url('/broken'), null)) as Record<string, any>;
    expect(problem).toMatchObject({ status: 500, ok: false, json: { title: 'boom' } });
  });

  it('says why a JSON response did not parse', async () => {
    const { call } = callContext();
    const r = (await httpGet(call, server.url('/bad-json'), null)) as Record<string, any>;
    expect(r.json).toBeUndefined();
    expect(r.json_error).toMatch(/JSON/);
  });

  it('sends headers and query parameters, repeating a name for a list', async () => {
    const { call } = callContext();
    const r = (await httpGet(call, server.url('/echo?keep=1'), {
      headers: { 'X-Token': 'abc', 'X-Count': 3 },
      query: { page: 2, tag: ['a', 'b c'], flag: true },
    })) as Record<string, any>;
    expect(r.json.method).toBe('GET');
    expect(r.json.url).toBe('/echo?keep=1&page=2&tag=a&tag=b+c&flag=true');
    expect(r.json.headers['x-token']).toBe('abc');
    expect(r.json.headers['x-count']).toBe('3');
  });

  it('follows redirects and reports the final URL', async () => {
    const { call } = callContext();
    const r = (await httpGet(call, server.url('/redirect'), null)) as Record<string, any>;
    expect(r.status).toBe(200);
    expect(r.url).toBe(server.url('/json'));
  });

  it('decodes the charset the response names and joins Set-Cookie lines', async () => {
    const { call } = callContext();
    const latin = (await httpGet(call, server.url('/latin1'), null)) as Record<string, any>;
    expect(latin.body).toBe('café');
    const cookies = (await httpGet(call, server.url('/cookies'), null)) as Record<string, any>;
    expect(cookies.headers['set-cookie']).toBe('a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT\nb=2');
    expect(cookies.headers['x-custom']).toBe('yes');
  });

  it('cuts bodies above 10 MiB and says so', async () => {
    const { call } = callContext();
    const r = (await httpGet(call, server.url('/big'), null)) as Record<string, any>;
    expect(r.truncated).toBe(true);
    expect(r.body.length).toBe(MAX_BODY_BYTES);
  });

  it('raises on a refused connection, naming the URL', async () => {
    const { call } = callContext();
    const port = await closedPort();
    await expect(httpGet(call, `http://127.0.0.1:${port}/x`, null)).rejects.toThrow(
      `net.get: GET http://127.0.0.1:${port}/x failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('explains a port that fetch refuses', async () => {
    const { call } = callContext();
    await expect(httpGet(call, 'http://127.0.0.1:25/', null)).rejects.toThrow(
      'net.get: GET http://127.0.0.1:25/ failed: bad port (fetch refuses ports of other protocols, such as 22, 25 or 6000)',
    );
  });

  it('raises when the time limit passes', async () => {
    const { call } = callContext();
    await expect(httpGet(call, server.url('/slow'), { timeout: '200ms' })).rejects.toThrow(
      `net.get: GET ${server.url('/slow')} timed out after 200ms`,
    );
  });

  it('stops when the task is cancelled', async () => {
    const controller = new AbortController();
    const { call } = callContext({ signal: controller.signal });
    server.onRequest = (req) => {
      if (req.url === '/slow') controller.abort(new Error('task timed out after 1s'));
    };
    try {
      await expect(httpGet(call, server.url('/slow'), null)).rejects.toThrow(
        `net.get: GET ${server.url('/slow')} was cancelled (task timed out after 1s)`,
      );
    } finally {
      server.onRequest = undefined;
    }
  });

  it('sends credentials in the URL as basic authentication', async () => {
    const { call } = callContext();
    const url = server.url('/echo').replace('http://', 'http://us%40er:p%3Ass@');
    const r = (await httpGet(call, url, null)) as Record<string, any>;
    expect(r.json.headers.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(r.url).toBe(server.url('/echo'));
  });

  it('keeps an Authorization header the script set over URL credentials', async () => {
    const { call } = callContext();
    const url = server.url('/echo').replace('http://', 'http://user:pw@');
    const r = (await httpGet(call, url, { headers: { Authorization: 'Bearer t0k' } })) as Record<string, any>;
    expect(r.json.headers.authorization).toBe('Bearer t0k');
  });

  it('hides a password in the URL from errors', async () => {
    const { call } = callContext();
    const port = await closedPort();
    const failure = await httpGet(call, `http://user:hunter2@127.0.0.1:${port}/`, null).catch((e: Error) => e);
    expect((failure as Error).message).toBe(
      `net.get: GET http://user:***@127.0.0.1:${port}/ failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it.each([
    [undefined, null, 'net.get: argument 1 must be a URL string, got nil'],
    [42, null, 'net.get: argument 1 must be a URL string, got number 42'],
    ['not a url', null, 'net.get: argument 1 "not a url" is not a valid URL'],
    ['ftp://127.0.0.1/x', null, 'net.get: argument 1 "ftp://127.0.0.1/x" is not an http or https URL'],
    ['http://127.0.0.1/', 'fast', 'net.get: argument 2 must be a table of options, got string "fast"'],
    ['http://127.0.0.1/', { timout: 5 }, 'net.get: unknown option "timout" (known: headers, timeout, query)'],
    ['http://127.0.0.1/', { timeout: 'soon' }, 'net.get: timeout must be a duration such as "5s"'],
    ['http://127.0.0.1/', { timeout: 0 }, 'net.get: timeout must be longer than 0, got number 0'],
    ['http://127.0.0.1/', { headers: { 'X-A': { nested: 1 } } }, 'net.get: header "X-A" must be a string, got table'],
    ['http://127.0.0.1/', { query: 'a=1' }, 'net.get: query must be a table of name = value, got string "a=1"'],
  ])('rejects bad arguments (%s, %j)', async (url, opts, message) => {
    const { call } = callContext();
    await expect(httpGet(call, url as never, opts as never)).rejects.toThrow(message);
  });
});

describe('net.post', () => {
  it('sends a table as JSON', async () => {
    const { call } = callContext();
    const r = (await httpPost(call, server.url('/echo'), { version: '1.2', tags: ['a'] }, null)) as Record<string, any>;
    expect(r.ok).toBe(true);
    expect(r.json.method).toBe('POST');
    expect(r.json.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.json.body)).toEqual({ version: '1.2', tags: ['a'] });
  });

  it('sends a table as a form when json = false', async () => {
    const { call } = callContext();
    const r = (await httpPost(call, server.url('/echo'), { a: 'x y', b: [1, 2] }, { json: false })) as Record<
      string,
      any
    >;
    expect(r.json.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(r.json.body).toBe('a=x+y&b=1&b=2');
  });

  it('sends a string as it is, or as a JSON string when json = true', async () => {
    const { call } = callContext();
    const plain = (await httpPost(call, server.url('/echo'), 'hello', null)) as Record<string, any>;
    expect(plain.json.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(plain.json.body).toBe('hello');
    const quoted = (await httpPost(call, server.url('/echo'), 'hello', { json: true })) as Record<string, any>;
    expect(quoted.json.headers['content-type']).toBe('application/json');
    expect(quoted.json.body).toBe('"hello"');
  });

  it('keeps a Content-Type the script set, and sends no body for nil', async () => {
    const { call } = callContext();
    const custom = (await httpPost(
      call,
      server.url('/echo'),
      { a: 1 },
      {
        headers: { 'Content-Type': 'application/vnd.api+json' },
      },
    )) as Record<string, any>;
    expect(custom.json.headers['content-type']).toBe('application/vnd.api+json');
    expect(custom.json.body).toBe('{"a":1}');
    const empty = (await httpPost(call, server.url('/echo'), null, null)) as Record<string, any>;
    expect(empty.json.body).toBe('');
    expect(empty.json.headers['content-length']).toBe('0');
  });

  it('returns an HTTP error status without raising', async () => {
    const { call } = callContext();
    const r = (await httpPost(call, server.url('/missing'), 'x', null)) as Record<string, any>;
    expect(r).toMatchObject({ status: 404, ok: false });
  });

  it('sends nothing in a dry run and says what it would have sent', async () => {
    const { call } = callContext({ dryRun: true });
    const before = server.hits('/echo');
    const r = await httpPost(call, server.url('/echo'), { a: 1 }, null);
    expect(r).toEqual({
      skipped: true,
      ok: true,
      note: `dry-run: would POST 7 bytes (application/json) to ${server.url('/echo')}`,
    });
    expect(server.hits('/echo')).toBe(before);
  });

  it('checks its arguments in a dry run too', async () => {
    const { call } = callContext({ dryRun: true });
    await expect(httpPost(call, null, 'x', null)).rejects.toThrow('net.post: argument 1 must be a URL string, got nil');
  });

  it('refuses bodies JSON cannot carry', async () => {
    const { call } = callContext();
    const fn = { kind: 'lua-function', call: async () => [] };
    await expect(httpPost(call, server.url('/echo'), { cb: fn } as never, null)).rejects.toThrow(
      'net.post: the body holds a function at "cb"; JSON cannot carry it',
    );
    await expect(httpPost(call, server.url('/echo'), { x: Infinity }, null)).rejects.toThrow(
      'net.post: the body holds Infinity at "x"',
    );
    await expect(httpPost(call, server.url('/echo'), 'x', { json: 'yes' })).rejects.toThrow(
      'net.post: option json must be true or false, got string "yes"',
    );
  });

  it('raises on a refused connection, naming the URL', async () => {
    const { call } = callContext();
    const port = await closedPort();
    await expect(httpPost(call, `http://127.0.0.1:${port}/hook`, { a: 1 }, null)).rejects.toThrow(
      `net.post: POST http://127.0.0.1:${port}/hook failed: connect ECONNREFUSED`,
    );
  });
});
