import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { HttpRouterRef } from '@runner/plugin-sdk';
import { localAuth, localToken, runRunner } from './helpers.js';
import { bootEngine, type EngineHarness } from './workflow-helpers.js';

/**
 * Hooks on the durable event queue, through one master booted in this process with its real HTTP
 * server, store and local door (scripts with side effects run in the local executor): priority
 * order, a failing hook failing its event and retry completing it, the WebSocket messages, compile
 * errors at save, the test endpoint, the CLI, and `flows.run` starting a saved flow of the real flows
 * plugin (and refused for an inactive one).
 */

let h: EngineHarness;
let base: string;
let ws: WebSocket;
const messages: { type: string; data: Record<string, unknown> }[] = [];
// Written by hook scripts, which run as the executor's unprivileged user.
const out = mkdtempSync(join(tmpdir(), 'runner-hooks-out-'));
chmodSync(out, 0o777);

beforeAll(async () => {
  h = await bootEngine({
    profile: 'master',
    env: { RUNNER_HTTP_PORT: '0', RUNNER_HTTP_BIND_ADDRESS: '127.0.0.1', RUNNER_GRPC_PORT: '0' },
  });
  base = `http://127.0.0.1:${h.kernel.get(HttpRouterRef).address()?.port}/api/v1`;
  ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers: localAuth(h.dataDir) });
  ws.on('message', (text) => messages.push(JSON.parse(String(text)) as (typeof messages)[number]));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
});
afterAll(async () => {
  ws?.terminate();
  await h?.stop();
});

async function api<T = Record<string, any>>(method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...localAuth(h.dataDir), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Runs a workflow whose one task fails, and resolves with its stored `workflow.failed` event once it ended. */
async function failRun(name: string, stack?: string): Promise<Record<string, any>> {
  const run = await h.run(
    name,
    `version: "1.0"\ntasks:\n  - name: boom\n    exec:\n      script: error("boom")\n`,
    stack === undefined ? {} : { stack },
  );
  expect(run.record.status).toBe('failed');
  const failed = run.events.find((e) => e.type === 'workflow.failed')!;
  let event: Record<string, any> = {};
  await expect
    .poll(async () => (event = (await api(`GET`, `/events/${failed.id}`)).body).status, { timeout: 30_000 })
    .toMatch(/^(completed|failed)$/);
  return event;
}

const appendLine = (file: string, text: string) =>
  `local f = assert(io.open(${JSON.stringify(file)}, "a")) f:write(${text} .. "\\n") f:close()`;

describe('hooks on workflow.failed', () => {
  it('run in priority order, each seeing the event, and the event completes', async () => {
    const file = join(out, 'order.txt');
    // Created second with the lower number: order is by priority, not by creation.
    const second = await api('POST', '/hooks', {
      name: 'second',
      event_type: 'workflow.failed',
      priority: 20,
      script: appendLine(file, '"second " .. hook.payload.workflow_name'),
    });
    expect(second.status).toBe(201);
    const first = await api('POST', '/hooks', {
      name: 'first',
      event_type: 'workflow.*',
      priority: 10,
      script: `if hook.event ~= "workflow.failed" then return true end\n${appendLine(file, '"first " .. hook.event .. " " .. hook.id')}`,
    });
    expect(first.status).toBe(201);

    const event = await failRun('ordered');
    expect(event.status).toBe('completed');
    expect(event.hooks.map((r: { hook_name: string; status: string }) => [r.hook_name, r.status])).toEqual([
      ['first', 'succeeded'],
      ['second', 'succeeded'],
    ]);
    expect(readFileSync(file, 'utf8')).toBe(`first workflow.failed ${first.body.id}\nsecond ordered\n`);

    const listed = (await api('GET', '/hooks')).body;
    expect(listed.hooks.map((x: { name: string }) => x.name)).toEqual(['first', 'second']);
    expect(listed.hooks[1]).toMatchObject({ executions: 1, success_rate: 100 });
    const history = (await api('GET', '/hooks/second/history')).body;
    expect(history.executions[0]).toMatchObject({ event_id: event.id, success: true, event_type: 'workflow.failed' });
    await api('POST', '/hooks/first/disable');
    await api('POST', '/hooks/second/disable');
  });

  it('a failing hook fails the event without stopping the next; retry runs only it again', async () => {
    const flag = join(out, 'allow');
    const file = join(out, 'retry.txt');
    await api('POST', '/hooks', {
      name: 'picky',
      event_type: 'workflow.failed',
      priority: 1,
      retries: 1,
      script: `local f = io.open(${JSON.stringify(flag)}) if not f then return false, "no flag yet" end f:close()`,
    });
    await api('POST', '/hooks', {
      name: 'after-picky',
      event_type: 'workflow.failed',
      priority: 2,
      script: appendLine(file, 'hook.event_id'),
    });
    const event = await failRun('retried');
    expect(event).toMatchObject({ status: 'failed', last_error: 'picky: no flag yet' });
    expect(event.hooks.map((r: Record<string, unknown>) => [r.hook_name, r.status, r.attempts])).toEqual([
      ['picky', 'failed', 2],
      ['after-picky', 'succeeded', 1],
    ]);
    expect((await api('POST', `/events/${event.id}/retry`)).status).toBe(200);
    await expect
      .poll(async () => (await api('GET', `/events/${event.id}`)).body.status, { timeout: 30_000 })
      .toBe('failed');

    writeFileSync(flag, '');
    chmodSync(flag, 0o644);
    const again = await api('POST', `/events/${event.id}/retry`);
    expect(again.body.status).toMatch(/^(pending|processing|completed)$/);
    await expect
      .poll(async () => (await api('GET', `/events/${event.id}`)).body.status, { timeout: 30_000 })
      .toBe('completed');
    // after-picky had succeeded: it did not run a second time.
    expect(readFileSync(file, 'utf8')).toBe(`${event.id}\n`);
    expect((await api('POST', `/events/${event.id}/retry`)).status).toBe(409);
    const failedList = (await api('GET', '/events?status=completed&type=workflow.*')).body;
    expect(failedList.events.map((e: { id: string }) => e.id)).toContain(event.id);
    await api('DELETE', '/hooks/picky');
    await api('DELETE', '/hooks/after-picky');
  });

  it('sends hook_execution, event_update and workflow_update on the WebSocket', async () => {
    await api('POST', '/hooks/first/enable');
    const event = await failRun('announced');
    await expect
      .poll(() =>
        messages.some((m) => m.type === 'event_update' && m.data.id === event.id && m.data.status === 'completed'),
      )
      .toBe(true);
    expect(messages.find((m) => m.type === 'hook_execution' && m.data.hook_name === 'first')?.data).toMatchObject({
      hook_id: expect.any(Number),
      success: true,
      duration_ms: expect.any(Number),
    });
    expect(
      messages.find((m) => m.type === 'workflow_update' && m.data.workflow_name === 'announced')?.data,
    ).toMatchObject({
      change: 'started',
      status: 'running',
    });
    await api('POST', '/hooks/first/disable');
  });
});

describe('hooks of a stack', () => {
  it('fire only for runs of their stack, whose events say the stack; a stack that does not exist is refused', async () => {
    expect((await api('POST', '/stacks', { name: 'qa', environment: 'development' })).status).toBe(201);
    const missing = await api('POST', '/hooks', {
      name: 'nowhere',
      event_type: 'workflow.failed',
      stack: 'qa-typo',
      script: 'return true',
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ field: 'stack' });
    expect(missing.body.error.message).toContain('stack "qa-typo" does not exist');
    const created = await api('POST', '/hooks', {
      name: 'qa-only',
      event_type: 'workflow.failed',
      stack: 'qa',
      script: 'return hook.payload.stack == "qa"',
    });
    expect(created.status).toBe(201);

    const inStack = await failRun('in-qa', 'qa');
    expect(inStack.data.stack).toBe('qa');
    expect(inStack.hooks.map((r: { hook_name: string; status: string }) => [r.hook_name, r.status])).toEqual([
      ['qa-only', 'succeeded'],
    ]);
    const outside = await failRun('no-stack');
    expect(outside.data.stack).toBeUndefined();
    expect(outside.hooks).toEqual([]);
    await api('POST', '/hooks/qa-only/disable');
  });
});

describe('hooks at save and on test', () => {
  it('refuses a script that does not compile, with its line and column', async () => {
    const bad = await api('POST', '/hooks', { name: 'bad', event_type: 'task.*', script: 'local x = 1\nif x then\n' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: 'script', details: { line: 3 } });
    expect(bad.body.error.message).toMatch(/^script: hook bad:3:/);
    const unknown = await api('POST', '/hooks', { name: 'typo', event_type: 'workflow.fialed', script: 'return true' });
    expect(unknown.body.error.message).toMatch(/did you mean "workflow.failed"/);
    // A name nothing emits is refused too: such a hook would never run.
    const never = await api('POST', '/hooks', { name: 'never', event_type: 'schedule.missed', script: 'return true' });
    expect(never.status).toBe(400);
    expect(never.body.error).toMatchObject({ field: 'event_type' });
    expect(never.body.error.message).toContain('agent.status_changed');
  });

  it('tests a hook on a sample payload; dry run starts nothing', async () => {
    await api('POST', '/hooks', {
      name: 'tested',
      event_type: 'agent.*',
      script: 'print("agent " .. hook.payload.agent_name) if dry_run then return true end return false, "acted"',
    });
    const dry = await api('POST', '/hooks/tested/test', { dry_run: true });
    expect(dry.body).toMatchObject({
      success: true,
      output: 'agent web-1',
      event_type: 'agent.connected',
      dry_run: true,
    });
    const given = await api('POST', '/hooks/tested/test', { payload: { agent_name: 'db-9' } });
    expect(given.body).toMatchObject({ success: false, error: 'acted', output: 'agent db-9' });
    // Tests are not executions: the history stays empty.
    expect((await api('GET', '/hooks/tested')).body).toMatchObject({ executions: 0, success_rate: null });
  });

  it('is driven by the CLI: hook add from a file, the events a hook may name, and events list', async () => {
    const script = join(out, 'cli.lua');
    writeFileSync(script, 'return true\n');
    const master = ['--master-url', base.replace('/api/v1', '')];
    const env = { RUNNER_TOKEN: localToken(h.dataDir) };
    const added = await runRunner(
      ['hook', 'add', 'from-cli', '--event', 'task.failed', '--script', script, '--priority', '5', ...master],
      { env },
    );
    expect(added.stderr).toBe('');
    expect(added.stdout).toMatch(/^hook from-cli \(#\d+\) added on task.failed/);
    const names = await runRunner(['hook', 'events', ...master], { env });
    expect(names.stdout).toMatch(/^agent\.status_changed +event +a connected agent became warning or error/m);
    expect(names.stdout).toMatch(/^task\.\* +pattern +every task event$/m);
    const events = await runRunner(['events', 'list', '--type', 'workflow.failed', '-o', 'json', ...master], { env });
    expect(JSON.parse(events.stdout).events.length).toBeGreaterThanOrEqual(3);
    expect((await api('GET', '/hooks/from-cli')).body).toMatchObject({ priority: 5, script: 'return true\n' });
  });
});

describe('hooks that start saved flows', () => {
  const GREETER = [
    'version: "1.0"',
    'vars:',
    '  x: nobody',
    '  n: "1"',
    'tasks:',
    '  - name: greet',
    '    exec:',
    '      script: log.info("greeting " .. vars.x .. " times " .. vars.n)',
    '',
  ].join('\n');
  /** A hook on workflow.failed that acts only on runs of `workflow` (other tests fail runs too). */
  const onFailureOf = (workflow: string, then: string) =>
    `if hook.payload.workflow_name ~= "${workflow}" then return true end\n${then}`;

  it('starts the flow through flows.run with its vars, recorded as the hook’s run of that flow version', async () => {
    expect((await api('POST', '/flows', { name: 'greeter', yaml: GREETER })).status).toBe(201);
    await api('POST', '/hooks', {
      name: 'greet-on-failure',
      event_type: 'workflow.failed',
      script: onFailureOf(
        'wants-greeting',
        'flows.run("greeter", { x = "from " .. hook.payload.workflow_name, n = 3 })',
      ),
    });
    const event = await failRun('wants-greeting');
    expect(event).toMatchObject({ status: 'completed', last_error: null });

    // The flow's one run: started by the hook (its trigger and user), of version 1, with the vars.
    let runs: Record<string, any>[] = [];
    await expect
      .poll(async () => (runs = (await api('GET', '/executions?workflow=greeter&trigger=hook')).body.executions).length)
      .toBe(1);
    expect(runs[0]).toMatchObject({ trigger: 'hook', user: 'hook:greet-on-failure' });
    await expect
      .poll(async () => (await api('GET', `/executions/${runs[0]!.id}`)).body.status, { timeout: 30_000 })
      .toBe('succeeded');
    const { inputs } = (await api('GET', `/executions/${runs[0]!.id}/inputs`)).body;
    expect(inputs).toMatchObject({
      source: 'flow greeter v1',
      vars: { x: 'from wants-greeting', n: '3' },
    });
    const log = (await api('GET', `/executions/${runs[0]!.id}/log?q=greeting`)).body;
    expect(log.lines.map((l: { message: string }) => l.message)).toEqual(['greeting from wants-greeting times 3']);
    const history = (await api('GET', '/hooks/greet-on-failure/history')).body;
    expect(history.executions[0]).toMatchObject({ event_id: event.id, success: true });
    await api('POST', '/hooks/greet-on-failure/disable');
  });

  it('refuses to start an inactive flow: the hook fails with the reason and nothing runs', async () => {
    expect((await api('POST', '/flows', { name: 'dormant', yaml: GREETER, active: false })).status).toBe(201);
    await api('POST', '/hooks', {
      name: 'wake-dormant',
      event_type: 'workflow.failed',
      script: onFailureOf('wants-dormant', 'flows.run("dormant", { x = "never", n = 0 })'),
    });
    const event = await failRun('wants-dormant');
    const reason =
      'flows.run("dormant"): flow "dormant" is inactive: schedules and hooks start only active flows (runner flow activate dormant)';
    expect(event).toMatchObject({ status: 'failed', last_error: `wake-dormant: ${reason}` });
    expect(event.hooks).toEqual([
      expect.objectContaining({ hook_name: 'wake-dormant', status: 'failed', error: reason }),
    ]);
    const history = (await api('GET', '/hooks/wake-dormant/history')).body;
    expect(history.executions[0]).toMatchObject({ event_id: event.id, success: false, error: reason });
    expect((await api('GET', '/executions?workflow=dormant&limit=0')).body.total).toBe(0);
    await api('POST', '/hooks/wake-dormant/disable');
  });
});
