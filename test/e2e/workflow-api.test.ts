import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { HttpRouterRef, type BusEvent, type TaskLogLine } from '@runner/plugin-sdk';
import { localAuth } from './helpers.js';
import { bootEngine, workflow, type EngineHarness } from './workflow-helpers.js';

/**
 * The engine's REST endpoints and the WebSocket, through a master kernel booted in this process
 * with its real HTTP server on an ephemeral port: POST /api/v1/workflows/run, GET /api/v1/executions,
 * GET /api/v1/executions/:id, /api/v1/ws.
 */

const RESULT_CAP = 128;
const LOG_CAP = 400;
let h: EngineHarness;
let base: string;

beforeAll(async () => {
  h = await bootEngine({
    profile: 'master',
    env: {
      RUNNER_HTTP_PORT: '0',
      RUNNER_HTTP_BIND_ADDRESS: '127.0.0.1',
      RUNNER_GRPC_PORT: '0',
      RUNNER_ENGINE_TASK_LOG_BYTES: String(LOG_CAP),
      RUNNER_ENGINE_TASK_RESULT_BYTES: String(RESULT_CAP),
    },
  });
  const address = h.kernel.get(HttpRouterRef).address();
  base = `http://127.0.0.1:${address?.port}/api/v1`;
});
afterAll(async () => {
  await h?.stop();
});

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...localAuth(h.dataDir),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** Resolves with the run's final bus event, whether it came before this call or after. */
function finished(runId: string): Promise<BusEvent> {
  const isEnd = (e: BusEvent) =>
    (e.type === 'workflow.completed' || e.type === 'workflow.failed') &&
    (e.data as { run_id: string }).run_id === runId;
  const seen = h.events.find(isEnd);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => {
    const off = h.kernel.events.onAny((e) => {
      if (isEnd(e)) {
        off();
        resolve(e);
      }
    });
  });
}

/** An execution as the API shows it (snake_case). */
interface Execution {
  id: string;
  workflow_name: string;
  status: string;
  dry_run: boolean;
  error?: string;
  counts: Record<string, number>;
  tasks: { name: string; status: string; message?: string; log: TaskLogLine[]; log_truncated: boolean }[];
}

/** POSTs a run, waits for its end, returns the stored execution. */
async function runToEnd(body: Record<string, unknown>): Promise<Execution> {
  const started = await api('POST', '/workflows/run', body);
  expect(started.status).toBe(202);
  const id = started.body?.id as string;
  await finished(id);
  const execution = await api('GET', `/executions/${id}`);
  expect(execution.status).toBe(200);
  return execution.body as unknown as Execution;
}

const hello = workflow(`
tasks:
  - name: greet
    exec:
      script: |
        log.info("hello", { who = "api" })
        return true, "greeted", { n = 1 }
`);

describe('POST /api/v1/workflows/run', () => {
  it('starts a run from content (202) and records it with its tasks and logs', async () => {
    const started = await api('POST', '/workflows/run', { content: hello, workflow_name: 'api-hello' });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({
      id: expect.stringMatching(/^r-[0-9a-z]{9}-[0-9a-f]{8}$/),
      status: 'running',
      workflow_name: 'api-hello',
    });
    const id = started.body?.id as string;
    await finished(id);
    const { status, body } = await api('GET', `/executions/${id}`);
    expect(status).toBe(200);
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(body).toEqual({
      id,
      workflow_name: 'api-hello',
      status: 'succeeded',
      dry_run: false,
      started_at: time,
      completed_at: time,
      duration: expect.any(Number),
      trigger: 'api',
      // Who started it, as the authentication guard named the caller (the master's local credential).
      user: 'local',
      counts: { succeeded: 1 },
      tasks: [
        {
          name: 'greet',
          task: 'greet',
          agent: 'localhost',
          status: 'succeeded',
          attempts: 1,
          started_at: time,
          completed_at: time,
          duration: expect.any(Number),
          message: 'greeted',
          outputs: { n: 1 },
          log: [{ timestamp: time, level: 'info', message: 'hello', fields: { who: 'api' } }],
          log_truncated: false,
        },
      ],
    });
  });

  it('runs a file on the master, named after the file, with vars, values, group and dry_run', async () => {
    const file = h.write(
      'api-file',
      workflow(`
vars:
  app: web
values:
  localhost: { port: 1 }
groups:
  only: [b]
tasks:
  - name: a
    exec:
      script: return true
  - name: b
    dry_run: run
    exec:
      script: return true, vars.app .. ":" .. values.port .. ":" .. tostring(dry_run)
  - name: c
    exec:
      script: return true
`),
    );
    const record = await runToEnd({
      file,
      vars: { app: 'api' },
      values: { localhost: { port: 2 } },
      group: 'only',
      dry_run: true,
      verbose: true,
    });
    expect(record).toMatchObject({ workflow_name: 'api-file', dry_run: true, status: 'succeeded' });
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([['b', 'succeeded', 'api:2:true']]);
  });

  it('refuses an invalid workflow with 400 and every problem, and records nothing', async () => {
    const before = (await api('GET', '/executions')).body?.total;
    const { status, body } = await api('POST', '/workflows/run', {
      workflow_name: 'broken',
      content: workflow(`
tasks:
  - name: a
    depends_on: [b]
    exec:
      script: return true
  - name: b
    depends_on: [a]
    exec:
      script: x = = 1
`),
    });
    expect(status).toBe(400);
    expect(body).toEqual({
      error: {
        code: 'invalid_workflow',
        message: [
          'broken:8:18: circular dependency: a -> b -> a',
          'broken:10:15: tasks[1].exec.script: the script of task "b" does not compile: unexpected symbol near \'=\'',
        ].join('\n'),
        details: {
          problems: [
            {
              file: 'broken',
              line: 8,
              column: 18,
              path: 'tasks[1].depends_on[0]',
              message: 'circular dependency: a -> b -> a',
            },
            {
              file: 'broken',
              line: 10,
              column: 15,
              path: 'tasks[1].exec.script',
              message: 'tasks[1].exec.script: the script of task "b" does not compile: unexpected symbol near \'=\'',
            },
          ],
        },
      },
    });
    expect((await api('GET', '/executions')).body?.total).toBe(before);
  });

  const invalid: [string, string, string[]][] = [
    [
      'an unknown key',
      'tasks:\n  - name: a\n    retries: 3\n    exec:\n      script: return true\n',
      ['w:4:5: tasks[0]: unknown key "retries" (did you mean "retry"?)'],
    ],
    [
      'a wrong type',
      'parallel: two\ntasks:\n  - name: a\n    exec:\n      script: return true\n',
      ['w:2:11: parallel: expected an integer of at least 1, found the string "two"'],
    ],
    [
      'an unknown task in groups and depends_on',
      'groups:\n  g: [deploy]\ntasks:\n  - name: build\n    depends_on: [fetch]\n    exec:\n      script: return true\n',
      ['w:3:7: groups.g[0]: unknown task "deploy"', 'w:6:18: tasks[0].depends_on[0]: unknown task "fetch"'],
    ],
    [
      'a duplicate task',
      'tasks:\n  - name: a\n    exec:\n      script: return true\n  - name: a\n    exec:\n      script: return true\n',
      ['w:6:11: tasks[1].name: duplicate task name "a" (first defined at line 3)'],
    ],
    [
      'malformed YAML',
      'tasks: [\n',
      ['w:3:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]'],
    ],
    [
      'an unknown template variable',
      'tasks:\n  - name: build\n    exec:\n      script: return true, "{{ tasks.deploy.outputs.x }}"\n',
      ['w:5:32: tasks[0].exec.script: "tasks.deploy" names no task'],
    ],
  ];
  for (const [what, tail, messages] of invalid) {
    it(`refuses a workflow with ${what}: 400 invalid_workflow with its problems`, async () => {
      const { status, body } = await api('POST', '/workflows/run', {
        workflow_name: 'w',
        content: `version: "1.0"\n${tail}`,
      });
      expect(status).toBe(400);
      const error = (body as { error: { code: string; message: string; details: { problems: unknown[] } } }).error;
      expect(error.code).toBe('invalid_workflow');
      expect(error.message).toBe(messages.join('\n'));
      expect(error.details.problems).toHaveLength(messages.length);
    });
  }

  const bad: [string, unknown, { message: string; field?: string; code?: string; status?: number }][] = [
    [
      'malformed JSON',
      '{"content": "x',
      { message: 'malformed JSON at line 1, column 15 (position 14): unterminated string' },
    ],
    ['an array', [], { message: 'the body must be a JSON object', field: 'body' }],
    [
      'neither file nor content',
      {},
      { message: 'give exactly one of file (a path on the master) or content (the workflow text)', field: 'file' },
    ],
    [
      'both file and content',
      { file: '/tmp/x.yaml', content: 'x' },
      { message: 'give exactly one of file (a path on the master) or content (the workflow text)', field: 'content' },
    ],
    ['content not a string', { content: 5 }, { message: 'content: expected string', field: 'content' }],
    ['an empty file', { file: '' }, { message: 'file: must not be empty', field: 'file' }],
    [
      'dry_run not a boolean',
      { content: hello, dry_run: 'yes' },
      { message: 'dry_run: expected boolean', field: 'dry_run' },
    ],
    [
      'verbose not a boolean',
      { content: hello, verbose: 1 },
      { message: 'verbose: expected boolean', field: 'verbose' },
    ],
    [
      'vars not strings',
      { content: hello, vars: { app: 1 } },
      { message: 'vars.app: expected string', field: 'vars.app' },
    ],
    [
      'values not mappings',
      { content: hello, values: { localhost: 1 } },
      { message: 'values.localhost: expected object', field: 'values.localhost' },
    ],
    [
      'delegate_to not a list',
      { content: hello, delegate_to: 'web-1' },
      { message: 'delegate_to: expected array', field: 'delegate_to' },
    ],
    ['group not a string', { content: hello, group: ['a'] }, { message: 'group: expected string', field: 'group' }],
    [
      'an unknown field',
      { content: hello, dryrun: true },
      {
        message:
          'dryrun: is not a known field (known: file, content, workflow_name, content_label, delegate_to, forks, values, vars, dry_run, group, verbose, stack, confirm, trigger)',
        field: 'dryrun',
      },
    ],
    [
      'a missing file',
      { file: 'missing.yaml' },
      { message: 'workflow file missing.yaml does not exist', field: 'file' },
    ],
    [
      'an unknown group',
      { content: hello, group: 'nope' },
      { message: 'unknown group "nope": the workflow defines no groups', field: 'group' },
    ],
    [
      'an undeclared var',
      { content: hello, vars: { app: 'x' } },
      { message: '--var "app=x": the workflow has no variable "app"; it declares no vars', field: 'vars' },
    ],
  ];
  for (const [what, body, expected] of bad) {
    it(`answers 400 naming the field for ${what}`, async () => {
      const answer = await api('POST', '/workflows/run', body);
      expect(answer.status).toBe(expected.status ?? 400);
      const error = (answer.body as { error: Record<string, unknown> }).error;
      expect(error).toMatchObject({ code: expected.code ?? 'invalid_input', message: expected.message });
      expect(error.field).toBe(expected.field);
    });
  }

  it('answers 415 for a body that is not JSON', async () => {
    const answer = await api('POST', '/workflows/run', 'version: "1.0"', { 'content-type': 'text/yaml' });
    expect(answer).toEqual({
      status: 415,
      body: {
        error: {
          code: 'unsupported_media_type',
          message: 'request body must be JSON (content-type application/json, UTF-8); got "text/yaml"',
        },
      },
    });
  });
});

describe('GET /api/v1/executions', () => {
  let ids: { alpha: string[]; beta: string };
  beforeAll(async () => {
    const ok = workflow(`
tasks:
  - name: ok
    exec:
      script: return true
`);
    const fails = workflow(`
tasks:
  - name: no
    exec:
      script: return false, "no"
`);
    const alpha1 = await runToEnd({ content: ok, workflow_name: 'list-alpha' });
    const alpha2 = await runToEnd({ content: ok, workflow_name: 'list-alpha' });
    const beta = await runToEnd({ content: fails, workflow_name: 'list-beta' });
    ids = { alpha: [alpha2.id, alpha1.id], beta: beta.id };
  });

  it('lists runs newest first, without task logs, with the total', async () => {
    const { status, body } = await api('GET', '/executions');
    expect(status).toBe(200);
    const runs = body?.executions as Execution[];
    expect(body).toMatchObject({ total: runs.length, limit: 50, offset: 0 });
    expect(runs.slice(0, 3).map((r) => r.id)).toEqual([ids.beta, ...ids.alpha]);
    expect(runs.every((r) => !('tasks' in r))).toBe(true);
    expect(runs[0]).toMatchObject({
      workflow_name: 'list-beta',
      status: 'failed',
      error: 'task no failed',
      counts: { failed: 1 },
    });
  });

  it('filters by workflow and status', async () => {
    const alpha = await api('GET', '/executions?workflow=list-alpha');
    expect(alpha.body).toMatchObject({ total: 2 });
    expect((alpha.body?.executions as Execution[]).map((r) => r.id)).toEqual(ids.alpha);
    const failedAlpha = await api('GET', '/executions?workflow=list-alpha&status=failed');
    expect(failedAlpha.body).toEqual({ executions: [], total: 0, limit: 50, offset: 0 });
    const failedBeta = await api('GET', '/executions?workflow=list-beta&status=failed');
    expect((failedBeta.body?.executions as Execution[]).map((r) => r.id)).toEqual([ids.beta]);
  });

  it('paginates with limit and offset; total counts every match', async () => {
    const page2 = await api('GET', '/executions?workflow=list-alpha&limit=1&offset=1');
    expect(page2.body).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect((page2.body?.executions as Execution[]).map((r) => r.id)).toEqual([ids.alpha[1]]);
    const past = await api('GET', '/executions?workflow=list-alpha&limit=1&offset=2');
    expect(past.body).toEqual({ executions: [], total: 2, limit: 1, offset: 2 });
  });

  it('filters by since (ISO 8601 or Unix seconds)', async () => {
    const future = Math.floor(Date.now() / 1000) + 3600;
    expect((await api('GET', `/executions?workflow=list-alpha&since=${future}`)).body).toMatchObject({ total: 0 });
    expect((await api('GET', '/executions?workflow=list-alpha&since=2000-01-01T00:00:00Z')).body).toMatchObject({
      total: 2,
    });
  });

  const badQueries: [string, string, string][] = [
    [
      'status=bogus',
      'status',
      'query parameter status: must be one of running, succeeded, failed, cancelled, interrupted, got "bogus"',
    ],
    ['limit=501', 'limit', 'query parameter limit: expected integer to be less or equal to 500'],
    ['limit=x', 'limit', 'query parameter limit: expected integer'],
    ['offset=-1', 'offset', 'query parameter offset: expected integer to be greater or equal to 0'],
    ['since=yesterday', 'since', 'since: expected an ISO 8601 time or Unix seconds up to year 275760, got "yesterday"'],
  ];
  for (const [query, field, message] of badQueries) {
    it(`answers 400 for ${query}`, async () => {
      expect(await api('GET', `/executions?${query}`)).toEqual({
        status: 400,
        body: { error: { code: 'invalid_input', message, field } },
      });
    });
  }

  it('answers 404 for an unknown execution', async () => {
    expect(await api('GET', '/executions/r-nope')).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'no execution with id "r-nope"' } },
    });
  });
});

describe('task logs', () => {
  it(`keeps a task's log up to engine.task_log_bytes (${LOG_CAP} here), then one note with the count dropped`, async () => {
    const record = await runToEnd({
      workflow_name: 'chatty',
      content: workflow(`
tasks:
  - name: chatty
    exec:
      script: |
        for i = 1, 40 do log.info("line " .. i) end
        return true
  - name: quiet
    exec:
      script: log.info("just one")
`),
    });
    const [chatty, quiet] = record.tasks;
    expect(chatty.log_truncated).toBe(true);
    const note = chatty.log.at(-1);
    expect(note).toEqual({
      timestamp: expect.any(String),
      level: 'warn',
      message: `log truncated at ${LOG_CAP} bytes; later lines are not kept`,
      fields: { dropped_lines: expect.any(Number) },
    });
    const kept = chatty.log.slice(0, -1);
    expect(kept.map((l) => l.message)).toEqual(Array.from({ length: kept.length }, (_, i) => `line ${i + 1}`));
    expect(kept.length + (note?.fields?.dropped_lines as number)).toBe(40);
    expect(quiet).toMatchObject({ log_truncated: false, log: [expect.objectContaining({ message: 'just one' })] });
  });
});

describe('task results in the record', () => {
  it(`keep a message and outputs up to engine.task_result_bytes (${RESULT_CAP} here), and say what they dropped`, async () => {
    const record = await runToEnd({
      workflow_name: 'bulky',
      content: workflow(`
tasks:
  - name: bulky
    exec:
      script: return true, string.rep("é", 200), { blob = string.rep("x", 500) }
  - name: reader
    depends_on: [bulky]
    exec:
      script: return true, "saw " .. string.len(tasks.bulky.outputs.blob)
  - name: small
    exec:
      script: return true, "fits", { n = 1 }
`),
    });
    // runToEnd reads the execution back from the store once it ended.
    const [bulky, reader, small] = record.tasks as (Execution['tasks'][number] & { outputs?: unknown })[];
    // 200 two-byte characters: cut at a character boundary within the cap, then the note.
    expect(bulky.message).toBe(
      `${'é'.repeat(RESULT_CAP / 2)} … [truncated: the message has 400 bytes; engine.task_result_bytes is ${RESULT_CAP}]`,
    );
    expect(bulky.outputs).toEqual({
      truncated: `the outputs have 511 bytes of JSON; engine.task_result_bytes is ${RESULT_CAP}, so the record does not keep them (later tasks of the run saw them whole)`,
    });
    expect(reader.message).toBe('saw 500');
    expect(small).toMatchObject({ message: 'fits', outputs: { n: 1 } });
  });
});

describe('WebSocket /api/v1/ws', () => {
  it('carries every event of a run as {type, timestamp, data}', async () => {
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers: localAuth(h.dataDir) });
    const messages: { type: string; timestamp: number; data: Record<string, unknown> }[] = [];
    socket.on('message', (raw) => messages.push(JSON.parse(raw.toString())));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    try {
      const started = await api('POST', '/workflows/run', {
        workflow_name: 'ws-run',
        content: workflow(`
tasks:
  - name: each
    loop: [a, b]
    exec:
      script: return true
  - name: broken
    exec:
      script: return false, "broken"
`),
      });
      const id = started.body?.id as string;
      await finished(id);
      // The bus's events only (`workflow_update` tells the UI about the same run in a message of its own).
      const mine = () => messages.filter((m) => m.data.run_id === id && m.type.includes('.'));
      // The socket may deliver the last message a moment after the bus event.
      await new Promise<void>((resolve) => {
        const check = () =>
          mine().some((m) => m.type === 'workflow.failed') ? resolve() : socket.once('message', check);
        check();
      });
      expect(mine().map((m) => [m.type, m.data.task_name ?? null, m.data.status])).toEqual([
        ['workflow.started', null, 'running'],
        ['task.started', 'each[a]', 'running'],
        ['task.completed', 'each[a]', 'succeeded'],
        ['task.started', 'each[b]', 'running'],
        ['task.completed', 'each[b]', 'succeeded'],
        ['task.started', 'broken', 'running'],
        ['task.failed', 'broken', 'failed'],
        ['workflow.failed', null, 'failed'],
      ]);
      for (const m of mine()) {
        expect(Number.isInteger(m.timestamp)).toBe(true);
        expect(Math.abs(m.timestamp - Date.now() / 1000)).toBeLessThan(60);
      }
      expect(mine().find((m) => m.type === 'task.failed')?.data).toEqual({
        workflow_name: 'ws-run',
        run_id: id,
        task_name: 'broken',
        agent: 'localhost',
        status: 'failed',
        attempt: 1,
        duration: expect.any(Number),
        error: 'broken',
      });
      expect(mine().at(-1)?.data).toEqual({
        workflow_name: 'ws-run',
        run_id: id,
        status: 'failed',
        duration: expect.any(Number),
        started_at: expect.any(Number),
        completed_at: expect.any(Number),
      });
    } finally {
      socket.close();
    }
  });
});
