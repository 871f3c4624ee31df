// The served OpenAPI document as a client generator meets it: fetched from a real master with
// every plugin loaded, checked by an independent validator (@apidevtools/swagger-parser), and
// compared with what the master actually answers.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAuth, spawnRunner, tempDataDir, waitForOutput } from './helpers.js';

let child: ReturnType<typeof spawnRunner>;
const dataDir = tempDataDir('runner-openapi-');
let origin: string;
let doc: { paths: Record<string, Record<string, { 'x-permission'?: string; parameters?: unknown[] }>> };

beforeAll(async () => {
  child = spawnRunner(['server', '--http-port', '0', '--port', '0', '--bind-address', '127.0.0.1'], {
    env: { RUNNER_DATA_DIR: dataDir },
  });
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  origin = `http://${address}`;
  const response = await fetch(`${origin}/api/v1/openapi.json`, { headers: await authHeaders() });
  expect(response.status).toBe(200);
  doc = (await response.json()) as typeof doc;
}, 30_000);

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGTERM');
});

async function authHeaders(): Promise<Record<string, string>> {
  return localAuth(dataDir);
}

describe('GET /api/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as { openapi: string };
    expect(api.openapi).toBe('3.1.0');
  });

  it('lists the routes of every plugin, each with its permission', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    // The routes service.md and the README promise; a plugin that adds a route undeclared fails here.
    for (const expected of [
      'GET /api/v1/health',
      'GET /api/v1/openapi.json',
      'POST /api/v1/workflows/run',
      'GET /api/v1/executions',
      'GET /api/v1/executions/{id}',
      'GET /api/v1/agents',
      'GET /api/v1/agents/{name}',
      'DELETE /api/v1/agents/{name}',
      'GET /api/v1/agents/{name}/metrics',
      'GET /api/v1/agents/{name}/logs/stream',
      'POST /api/v1/agents/{name}/exec',
      'POST /api/v1/agents/{name}/restart',
      'GET /api/v1/db/stats',
      'GET /api/v1/db/backup',
    ]) {
      expect(operations).toContain(expected);
    }
    for (const methods of Object.values(doc.paths))
      for (const operation of Object.values(methods)) expect(operation['x-permission']).toMatch(/^(public|\w+:\w+)$/);
  });

  it('documents only routes the master serves: none answers "no route"', async () => {
    const headers = await authHeaders();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        // Path parameters get a name that exists nowhere: the route must still be found (404 from the handler is fine).
        const url = origin + path.replace(/\{[^}]+\}/g, 'no-such-thing');
        if (url.endsWith('/logs/stream') || method === 'delete') continue;
        const response = await fetch(url, {
          method: method.toUpperCase(),
          headers: { ...headers, 'content-type': 'application/json' },
          body: method === 'get' ? undefined : '{}',
        });
        const text = await response.text();
        expect(text, `${method.toUpperCase()} ${path}`).not.toMatch(/no route for/);
      }
    }
  });

  it('still refuses a bad body with 400 naming the field', async () => {
    const response = await fetch(`${origin}/api/v1/workflows/run`, {
      method: 'POST',
      headers: { ...(await authHeaders()), 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'version: "1.0"', dry_run: 'yes' }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; field: string; message: string } };
    expect(body.error).toMatchObject({ code: 'invalid_input', field: 'dry_run' });
    expect(body.error.message).toMatch(/dry_run.*boolean/);
  });
});
