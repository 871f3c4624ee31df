// The engine's routes on a real HTTP server (ephemeral loopback port), with a guard standing in
// for authentication: it names the caller from a header, as the auth plugin's guard will.
import { HttpRouterRef, StoreRef, type Principal } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as http } from '@runner/plugin-http';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleExec } from '@runner/plugin-modules-host';
import { plugin as moduleLog } from '@runner/plugin-modules-script';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin as engine } from './plugin.js';

let kernel: TestKernel;
let base: string;
const dataDir = mkdtempSync(join(tmpdir(), 'runner-engine-routes-'));
beforeAll(async () => {
  kernel = await createTestKernel({
    dataDir,
    plugins: [http, store, template, luaRuntime, moduleExec, moduleLog, workflow, engine],
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

describe('the executions list', () => {
  const quick = `version: "1.0"
tasks:
  - name: only
    exec: { script: 'return true, "done"' }
`;
  const list = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/executions${query}`, { headers });

  it('answers a first page with an ETag that holds until a run is written, 304 when it still holds', async () => {
    const first = await list('?workflow=etag-check');
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    const before = (await first.json()) as { total: number };
    const same = await list('?workflow=etag-check', { 'if-none-match': etag });
    expect(same.status).toBe(304);

    const { body } = await api('POST', '/workflows/run', { content: quick, workflow_name: 'etag-check' });
    await until(async () => (await api('GET', `/executions/${body.id}`)).body.status === 'succeeded');
    const changed = await list('?workflow=etag-check', { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    const after = (await changed.json()) as { total: number; executions: { id: string; status: string }[] };
    expect(after.total).toBe(before.total + 1);
    expect(after.executions[0]).toMatchObject({ id: body.id, status: 'succeeded' });
    // Another filter or page size is another page with its own encoding.
    const small = await list('?workflow=etag-check&limit=1');
    expect(small.headers.get('etag')).not.toBe(changed.headers.get('etag'));
    expect(((await small.json()) as { limit: number }).limit).toBe(1);
  });

  it('answers 400 naming the field for a since beyond what a date holds, not 500', async () => {
    const response = await list('?since=99999999999999');
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(JSON.stringify(body)).toMatch(/since: expected an ISO 8601 time or Unix seconds/);
  });

  it('starts 50 runs at once without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const started = await Promise.all(
        Array.from({ length: 50 }, () => api('POST', '/workflows/run', { content: slow, workflow_name: 'fifty' })),
      );
      expect(started.every((s) => s.status === 202)).toBe(true);
      const ids = started.map((s) => s.body.id as string);
      await until(async () => (await api('GET', `/executions/${ids[49]}`)).body.status === 'running');
      await Promise.all(ids.map((id) => api('POST', `/executions/${id}/cancel`)));
      await until(async () => {
        const states = await Promise.all(ids.map(async (id) => (await api('GET', `/executions/${id}`)).body.status));
        return states.every((status) => status === 'cancelled');
      });
      // Warnings are emitted on the next tick after the listener is added.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('the run log in pages', () => {
  // Two tasks: 1,200 numbered lines, then 10 lines with a secret-looking field.
  const chatty = `version: "1.0"
tasks:
  - name: count
    exec:
      script: |
        for i = 1, 1200 do log.info("line " .. i) end
        return true
  - name: keys
    depends_on: [count]
    exec:
      script: |
        for i = 1, 10 do log.warn("key " .. i, { password = "hunter2-" .. i }) end
        return true
`;
  let id = '';
  type Page = { lines: { n: number; task: string; message: string; fields?: unknown }[]; total: number } & Record<
    string,
    unknown
  >;
  const page = async (query: string) => {
    const r = await api('GET', `/executions/${id}/log?${query}`);
    expect(r.status).toBe(200);
    return r.body as Page;
  };
  beforeAll(async () => {
    id = (await api('POST', '/workflows/run', { content: chatty, workflow_name: 'chatty' })).body.id as string;
    await until(async () => (await api('GET', `/executions/${id}`)).body.status !== 'running');
  });

  it('answers the tail first, then older pages by cursor, down to the first line', async () => {
    const last = await page('tail=100');
    expect(last.lines).toHaveLength(100);
    expect(last.lines.at(-1)).toMatchObject({ task: 'keys', message: 'key 10', n: last.total - 1 });
    expect(last.older).toBe(last.total - 100);
    expect(last).toMatchObject({ tasks: ['count', 'keys'], matched: last.total });
    const before = await page(`tail=100&before=${last.older as number}`);
    expect(before.lines.at(-1)?.n).toBe((last.older as number) - 1);
    expect(before.lines.map((l) => l.n)).toEqual([...Array(100).keys()].map((i) => (last.older as number) - 100 + i));
    const first = await page(`tail=5000&before=${before.older as number}`);
    expect(first.lines[0].n).toBe(0);
    expect(first.lines[0].message).toBe('line 1');
    expect(first).not.toHaveProperty('older');
  });

  it('filters by task and by text, counting the matches', async () => {
    const count = await page('tail=3&task=count');
    expect(count.lines.map((l) => l.message)).toEqual(['line 1198', 'line 1199', 'line 1200']);
    expect(count.matched).toBe(1200);
    const found = await page('tail=50&q=LINE%20119');
    // line 119 and line 1190..1199
    expect(found.matched).toBe(11);
    expect(found.lines.map((l) => l.message)).toContain('line 119');
    expect(await page('tail=5&agent=nowhere')).toMatchObject({ lines: [], matched: 0 });
  });

  it('filters by level: the level and above, with text too, in pages and in the download', async () => {
    const warnings = await page('tail=3&level=warn');
    expect(warnings.matched).toBe(10);
    expect(warnings.lines.map((l) => l.message)).toEqual(['key 8', 'key 9', 'key 10']);
    expect(warnings.older).toBe(warnings.lines[0].n);
    const older = await page(`tail=100&level=warn&before=${warnings.older as number}`);
    expect(older.lines.map((l) => l.message)).toEqual([...Array(7).keys()].map((i) => `key ${i + 1}`));
    expect((await page('tail=1&level=info')).matched).toBe(1210);
    expect((await page('tail=1&level=error')).matched).toBe(0);
    expect((await page('tail=5&level=warn&q=key%201')).matched).toBe(2);
    const text = await (await fetch(`${base}/executions/${id}/log?format=text&level=warn`)).text();
    expect(text.trimEnd().split('\n')).toHaveLength(10);
    expect((await api('GET', `/executions/${id}/log?level=loud`)).status).toBe(400);
  });

  it('masks fields under secret-looking keys', async () => {
    const keys = await page('tail=1&task=keys');
    expect(keys.lines[0]).toMatchObject({ message: 'key 10', fields: { password: '***' } });
    expect(JSON.stringify(keys)).not.toContain('hunter2');
  });

  it('downloads the whole log as text, with a file name', async () => {
    const response = await fetch(`${base}/executions/${id}/log?format=text`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="chatty-${id}.log"`);
    const text = await response.text();
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength((await page('tail=1')).total);
    expect(lines[0]).toMatch(/^\S+ INFO \[count@[^\]]+\] line 1$/);
    expect(text).not.toContain('hunter2');
    expect(lines.at(-1)).toMatch(/WARN \[keys@[^\]]+\] key 10 \{"password":"\*\*\*"\}$/);
  });

  it('serves the run without its logs when asked, and 404 for an unknown run', async () => {
    const { body } = await api('GET', `/executions/${id}?log=false`);
    expect(body.tasks).toHaveLength(2);
    expect((body.tasks as object[])[0]).not.toHaveProperty('log');
    expect((await api('GET', `/executions/${id}`)).body.tasks).toMatchObject([{ log: expect.any(Array) }, {}]);
    const missing = await api('GET', '/executions/r-nope/log');
    expect(missing.status).toBe(404);
    expect((missing.body.error as { message: string }).message).toBe('no execution with id "r-nope"');
  });

  it('names a bad page size', async () => {
    const { status, body } = await api('GET', `/executions/${id}/log?tail=0`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ field: 'tail' });
  });
});

describe('run again', () => {
  const waitEnd = (id: string) =>
    until(async () => (await api('GET', `/executions/${id}?log=false`)).body.status !== 'running');
  const greet = `version: "1.0"
vars: { who: nobody }
groups:
  extra: [other]
tasks:
  - name: hello
    exec: { script: 'return true, "hello " .. vars.who' }
  - name: other
    exec: { script: 'return true, "other " .. vars.who' }
`;

  for (const dryRun of [false, true]) {
    it(`starts pasted YAML again with the same vars, group and dry run (${dryRun}), recording who asked`, async () => {
      const first = await api(
        'POST',
        '/workflows/run',
        { content: greet, workflow_name: 'greet', vars: { who: 'world' }, dry_run: dryRun, group: 'extra' },
        'alice',
      );
      expect(first.status).toBe(202);
      await waitEnd(first.body.id as string);
      const again = await api('POST', `/executions/${first.body.id as string}/rerun`, undefined, 'bob');
      expect(again.status).toBe(202);
      const id = again.body.id as string;
      expect(id).not.toBe(first.body.id);
      await waitEnd(id);
      const [was, is] = [
        (await api('GET', `/executions/${first.body.id as string}?log=false`)).body,
        (await api('GET', `/executions/${id}?log=false`)).body,
      ];
      expect(is).toMatchObject({
        workflow_name: 'greet',
        dry_run: dryRun,
        trigger: 'api',
        user: 'bob',
        rerun_of: first.body.id,
        status: 'succeeded',
      });
      expect(was).not.toHaveProperty('rerun_of');
      // The group's task only, with the same var, both times.
      const task = (run: Record<string, unknown>) =>
        (
          run.tasks as {
            name: string;
            message?: string;
            started_at?: string;
            completed_at?: string;
            duration?: number;
          }[]
        )[0];
      expect(is.tasks).toHaveLength(1);
      expect(task(is)).toEqual({
        ...task(was),
        started_at: task(is).started_at,
        completed_at: task(is).completed_at,
        duration: task(is).duration,
      });
      if (!dryRun) expect(task(is)).toMatchObject({ name: 'other', message: 'other world' });
      // What it was started with, as the run page shows it.
      const inputs = await api('GET', `/executions/${first.body.id as string}/inputs`);
      expect(inputs.status).toBe(200);
      expect(inputs.body).toEqual({
        recorded: true,
        inputs: {
          content: greet,
          workflow_name: 'greet',
          vars: { who: 'world' },
          group: 'extra',
          dry_run: dryRun,
          verbose: false,
        },
      });
    });
  }

  it('reads a workflow file on the master again, as it is now', async () => {
    const dir = join(dataDir, 'workflows');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'again.yaml'),
      'version: "1.0"\ntasks:\n  - name: one\n    exec: { script: "return true" }\n',
    );
    const first = await api('POST', '/workflows/run', { file: 'again.yaml' }, 'alice');
    expect(first.status).toBe(202);
    await waitEnd(first.body.id as string);
    writeFileSync(
      join(dir, 'again.yaml'),
      'version: "1.0"\ntasks:\n  - name: two\n    exec: { script: "return true" }\n',
    );
    const again = await api('POST', `/executions/${first.body.id as string}/rerun`, undefined, 'alice');
    await waitEnd(again.body.id as string);
    const { body } = await api('GET', `/executions/${again.body.id as string}?log=false`);
    expect(body).toMatchObject({ workflow_name: 'again', status: 'succeeded', tasks: [{ name: 'two' }] });
  });

  it('answers 409 for a run recorded before runs kept their inputs', async () => {
    await kernel
      .get(StoreRef)
      .run(
        "INSERT INTO runs (id, workflow_name, status, dry_run, started_at, duration, counts) VALUES ('r-old', 'old', 'succeeded', 0, '2026-01-01T00:00:00.000Z', 0, '{}')",
      );
    const { status, body } = await api('POST', '/executions/r-old/rerun');
    expect(status).toBe(409);
    expect((body.error as { message: string }).message).toContain('before runs kept their inputs');
    expect((await api('GET', '/executions/r-old/inputs')).body).toEqual({
      recorded: false,
      reason: 'this run was recorded before runs kept their inputs',
    });
  });

  it('never stores inputs holding a secret, and says so instead of running them again', async () => {
    const first = await api('POST', '/workflows/run', {
      content: greet.replace('vars: { who: nobody }', 'vars: { who: nobody, db_password: none }'),
      workflow_name: 'greet',
      vars: { who: 'world', db_password: 'hunter2-in-vars' },
    });
    expect(first.status).toBe(202);
    await waitEnd(first.body.id as string);
    const stored = await kernel
      .get(StoreRef)
      .all<{ request: string }>('SELECT request FROM run_inputs WHERE run_id = ?', [first.body.id as string]);
    expect(stored).toHaveLength(1);
    expect(stored[0].request).not.toContain('hunter2-in-vars');
    const { status, body } = await api('POST', `/executions/${first.body.id as string}/rerun`);
    expect(status).toBe(409);
    expect((body.error as { message: string }).message).toContain('secret in its inputs');
    const inputs = await api('GET', `/executions/${first.body.id as string}/inputs`);
    expect(inputs.body).toMatchObject({ recorded: false, reason: expect.stringContaining('secret in its inputs') });
    expect(JSON.stringify(inputs.body)).not.toContain('hunter2-in-vars');
  });

  it('answers 404 for a run that does not exist', async () => {
    const { status, body } = await api('POST', '/executions/r-nope/rerun');
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'not_found', message: 'no execution with id "r-nope"' });
    expect((await api('GET', '/executions/r-nope/inputs')).status).toBe(404);
  });
});

describe('validate before running', () => {
  const count = async () => ((await api('GET', '/executions?limit=1')).body.total as number) ?? 0;

  it('answers each problem at its line and column, and records nothing', async () => {
    const before = await count();
    const bad =
      'version: "1.0"\ntasks:\n  - name: a\n    exec: { script: "return true" }\n  - nme: typo\n    exec: { script: "return (" }\n';
    const { status, body } = await api('POST', '/workflows/validate', { content: bad, vars: { x: '1' } });
    expect(status).toBe(200);
    expect(body.valid).toBe(false);
    const problems = body.problems as { line?: number; column?: number; message: string }[];
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatchObject({ line: 5, column: expect.any(Number), message: expect.stringContaining('nme') });
    expect(await count()).toBe(before);
  });

  it('reports a script that does not compile at its line', async () => {
    const bad =
      'version: "1.0"\ntasks:\n  - name: a\n    exec:\n      script: |\n        local x = 1\n        return (\n';
    const { body } = await api('POST', '/workflows/validate', { content: bad });
    expect(body.valid).toBe(false);
    expect((body.problems as { line?: number }[])[0].line).toBeGreaterThanOrEqual(6);
  });

  it('answers the name and tasks of a valid workflow, with the group applied', async () => {
    const good =
      'version: "1.0"\ngroups:\n  g: [b]\ntasks:\n  - name: a\n    exec: { script: "return true" }\n  - name: b\n    depends_on: [a]\n    exec: { script: "return true" }\n  - name: c\n    exec: { script: "return true" }\n';
    const { body } = await api('POST', '/workflows/validate', { content: good, workflow_name: 'w', group: 'g' });
    expect(body).toEqual({ valid: true, workflow_name: 'w', tasks: ['a', 'b'], problems: [], warnings: [] });
  });

  it('refuses what the run route refuses: a file outside the workflow directories', async () => {
    const { status } = await api('POST', '/workflows/validate', { file: '/etc/passwd' });
    expect(status).toBe(403);
  });
});
