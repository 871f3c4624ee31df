// The engine's routes on a real HTTP server (ephemeral loopback port), with a guard standing in
// for authentication: it names the caller from a header, as the auth plugin's guard will.
import { HttpRouterRef, type Principal } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as http } from '@runner/plugin-http';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleExec } from '@runner/plugin-module-exec';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin as engine } from './plugin.js';

let kernel: TestKernel;
let base: string;
beforeAll(async () => {
  kernel = await createTestKernel({
    plugins: [http, store, template, luaRuntime, moduleExec, workflow, engine],
    profile: 'master',
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1' },
  });
  const router = kernel.get(HttpRouterRef);
  router.guard({
    name: 'test-identity',
    order: 100,
    check(ctx) {
      const name = ctx.req.headers['x-test-user'];
      if (typeof name === 'string') ctx.principal = { id: name, name, role: 'admin' } as Principal;
    },
  });
  await kernel.ready();
  base = `http://127.0.0.1:${router.address()?.port}/api/v1`;
});
afterAll(() => kernel.stop());

async function api(method: string, path: string, body?: unknown, user?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (user !== undefined) headers['x-test-user'] = user;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const slow = `version: "1.0"
tasks:
  - name: wait
    exec: { script: 'exec.run("sleep 30"); return true' }
`;

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('run and cancel over REST', () => {
  it('records who started and who cancelled a run from the authenticated caller', async () => {
    const started = await api(
      'POST',
      '/workflows/run',
      { content: slow, workflow_name: 'slow', trigger: 'cli' },
      'alice',
    );
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    await until(async () => {
      const { body } = await api('GET', `/executions/${id}`);
      return (body.tasks as { status: string }[]).some((t) => t.status === 'running');
    });
    const cancelled = await api('POST', `/executions/${id}/cancel`, undefined, 'bob');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      id,
      status: 'cancelled',
      trigger: 'cli',
      user: 'alice',
      cancelled_by: 'bob',
      error: 'cancelled by bob',
    });
    expect((await api('GET', `/executions/${id}`)).body).toMatchObject({ user: 'alice', cancelled_by: 'bob' });
    expect((await api('GET', '/executions?workflow=slow')).body.executions).toMatchObject([
      { id, status: 'cancelled', user: 'alice', cancelled_by: 'bob' },
    ]);
  });

  it('records an unauthenticated run as started through the API, by nobody', async () => {
    const started = await api('POST', '/workflows/run', {
      content: 'version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "return true" }\n',
    });
    const { body } = await api('GET', `/executions/${started.body.id as string}`);
    expect(body.trigger).toBe('api');
    expect(body).not.toHaveProperty('user');
  });

  it('refuses a trigger a client may not claim, naming the field', async () => {
    const { status, body } = await api('POST', '/workflows/run', { content: slow, trigger: 'scheduler' });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_input', field: 'trigger' });
  });

  it('answers 404 for cancelling a run that does not exist', async () => {
    const { status, body } = await api('POST', '/executions/r-nope/cancel');
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'not_found', message: 'no execution with id "r-nope"' });
  });
});
