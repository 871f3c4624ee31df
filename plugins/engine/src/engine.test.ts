// The engine with its real neighbours: parser, Lua runtime, templates, store in a temp directory.
import { WorkflowEngineRef, type RunRecord, type TaskTapContext, type WorkflowEngine } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleExec } from '@runner/plugin-modules-host';
import { plugin as moduleLog } from '@runner/plugin-modules-script';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plugin as engine } from './plugin.js';

let kernel: TestKernel;
let runs: WorkflowEngine;
beforeEach(async () => {
  kernel = await createTestKernel({
    plugins: [store, template, luaRuntime, moduleLog, moduleExec, workflow, engine],
    profile: 'master',
  });
  await kernel.ready();
  runs = kernel.get(WorkflowEngineRef);
});
afterEach(() => kernel.stop());

const twoTasks = `
version: "1.0"
tasks:
  - name: first
    exec: { script: 'return true, "one"' }
  - name: second
    depends_on: [first]
    exec: { script: 'return true, "two"' }
`;

async function runContent(content: string, extra: Partial<Parameters<WorkflowEngine['start']>[0]> = {}) {
  const { runId, done } = await runs.start({ source: { content, name: 'two' }, ...extra });
  return { runId, record: await done };
}

describe('engine run taps', () => {
  it('calls before and after taps in order with the final records', async () => {
    const seen: string[] = [];
    runs.runTaps.beforeRun.tap('audit', (ctx) => void seen.push(`beforeRun ${ctx.workflowName} ${ctx.request.user}`));
    runs.runTaps.beforeTask.tap('audit', (ctx) => void seen.push(`beforeTask ${ctx.unit} attempt ${ctx.attempt}`));
    runs.runTaps.afterTask.tap(
      'audit',
      (ctx, result) => void seen.push(`afterTask ${ctx.unit} ${result.status} ${result.message}`),
    );
    runs.runTaps.afterRun.tap('audit', (run) => void seen.push(`afterRun ${run.status} ${run.counts.succeeded}`));
    const { record } = await runContent(twoTasks, { user: 'alice' });
    expect(record.status).toBe('succeeded');
    expect(seen).toEqual([
      'beforeRun two alice',
      'beforeTask first attempt 1',
      'afterTask first succeeded one',
      'beforeTask second attempt 1',
      'afterTask second succeeded two',
      'afterRun succeeded 2',
    ]);
  });

  it('records a run a before-run tap refused, and runs no task', async () => {
    let tasksRun = 0;
    runs.runTaps.beforeTask.tap('count', () => void tasksRun++);
    runs.runTaps.beforeRun.tap('open', () => undefined);
    runs.runTaps.beforeRun.tap('policy', () => ({ refuse: 'outside the change window' }));
    const { runId, record } = await runContent(twoTasks);
    expect(record).toMatchObject({
      status: 'failed',
      error: 'refused by policy: outside the change window',
      tasks: [],
    });
    expect(tasksRun).toBe(0);
    expect(await runs.get(runId)).toMatchObject({
      status: 'failed',
      error: 'refused by policy: outside the change window',
    });
  });

  it('treats a throwing before-run tap as a refusal naming it', async () => {
    runs.runTaps.beforeRun.tap('broken', () => {
      throw new Error('policy store unreachable');
    });
    const { record } = await runContent(twoTasks);
    expect(record.error).toBe('refused by broken: the tap failed: policy store unreachable');
  });

  it('fails a task a before-task tap refuses, with the reason on the task, without retrying', async () => {
    const attempts: number[] = [];
    runs.runTaps.beforeTask.tap('guard', async (ctx: TaskTapContext) => {
      attempts.push(ctx.attempt);
      return ctx.task === 'second' ? { refuse: 'second is frozen' } : undefined;
    });
    const { record } = await runContent(twoTasks.replace('depends_on: [first]', 'retry: { attempts: 3, delay: 1ms }'));
    expect(record.status).toBe('failed');
    const second = record.tasks.find((t) => t.name === 'second') as RunRecord['tasks'][number];
    expect(second).toMatchObject({ status: 'failed', message: 'refused by guard: second is frozen', attempts: 1 });
    expect((await runs.get(record.id))?.tasks.find((t) => t.name === 'second')?.message).toBe(
      'refused by guard: second is frozen',
    );
    expect(attempts).toEqual([1, 1]);
  });

  it('logs a failing after-tap and goes on with the others', async () => {
    const after: string[] = [];
    runs.runTaps.afterTask.tap('broken', () => {
      throw new Error('sink down');
    });
    runs.runTaps.afterTask.tap('next', (ctx) => void after.push(ctx.unit));
    runs.runTaps.afterRun.tap('broken-run', async () => {
      throw new Error('sink still down');
    });
    const { record } = await runContent(twoTasks);
    expect(record.status).toBe('succeeded');
    expect(after).toEqual(['first', 'second']);
    const warnings = kernel.logs.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings).toContain('engine run tap afterTask "broken" failed: sink down');
    expect(warnings).toContain('engine run tap afterRun "broken-run" failed: sink still down');
  });

  it('stops calling a tap once it is removed', async () => {
    let calls = 0;
    const untap = runs.runTaps.afterRun.tap('once', () => void calls++);
    await runContent(twoTasks);
    untap();
    await runContent(twoTasks);
    expect(calls).toBe(1);
  });
});

describe('cancel', () => {
  const slow = `
version: "1.0"
tasks:
  - name: wait
    exec: { script: 'exec.run("sleep 30"); return true' }
  - name: after
    depends_on: [wait]
    exec: { script: 'return true' }
`;

  it('stops the running task, skips the rest and records who cancelled', async () => {
    const { runId, done } = await runs.start({ source: { content: slow }, trigger: 'cli', user: 'alice' });
    await until(async () => (await runs.get(runId))?.tasks.some((t) => t.name === 'wait' && t.status === 'running'));
    // While it runs, the task not started yet is listed as pending, and the counts say 0 of 2 ended.
    const live = (await runs.get(runId)) as RunRecord;
    expect(live.tasks.map((t) => [t.name, t.status])).toEqual([
      ['wait', 'running'],
      ['after', 'pending'],
    ]);
    expect(live.counts).toEqual({ running: 1, pending: 1 });
    const started = Date.now();
    const cancelled = await runs.cancel(runId, { by: 'bob' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelledBy: 'bob', error: 'cancelled by bob' });
    expect(await done).toMatchObject({ status: 'cancelled' });
    const stored = (await runs.get(runId)) as RunRecord;
    expect(stored).toMatchObject({ status: 'cancelled', cancelledBy: 'bob', trigger: 'cli', user: 'alice' });
    expect(stored.tasks.map((t) => [t.name, t.status])).toEqual([
      ['wait', 'cancelled'],
      ['after', 'skipped'],
    ]);
    expect(stored.counts).toEqual({ cancelled: 1, skipped: 1 });
    expect(stored.tasks[0].message).toContain('cancelled by bob');
    expect(stored.tasks[1].message).toBe('not run: the run was cancelled');
  });

  it.each([
    ['exec.run', (pidFile: string) => `exec.run("sleep 300 & echo $! > ${pidFile}; wait")`],
    ['os.execute', (pidFile: string) => `os.execute("sleep 300 & echo $! > ${pidFile}; wait")`],
    ['io.popen', (pidFile: string) => `io.popen("sleep 300 & echo $! > ${pidFile}; wait"):read("a")`],
  ])('kills what %s started, by process group', async (_name, script) => {
    const dir = mkdtempSync(join(tmpdir(), 'engine-cancel-'));
    // A master's commands run as engine.run_as (runner-exec when the tests run as root): it writes here.
    chmodSync(dir, 0o777);
    const pidFile = join(dir, 'pid');
    const content = `version: "1.0"\ntasks:\n  - name: wait\n    exec: { script: '${script(pidFile)}; return true' }\n`;
    const { runId, done } = await runs.start({ source: { content } });
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    await runs.cancel(runId, { by: 'bob' });
    expect((await done).status).toBe('cancelled');
    await until(() => !alive(pid), 5_000);
  });

  it('answers undefined for an unknown run and the record for one that ended', async () => {
    expect(await runs.cancel('no-such-run')).toBeUndefined();
    const { runId } = await runContent(twoTasks);
    expect(await runs.cancel(runId, { by: 'bob' })).toMatchObject({ status: 'succeeded' });
    expect((await runs.get(runId))?.cancelledBy).toBeUndefined();
  });
});

describe('sources', () => {
  it('resolves a registered kind and names it in errors', async () => {
    runs.registerSource('flow', async ({ ref, version }) => ({
      content: twoTasks,
      name: `${ref}-v${version}`,
    }));
    const { done } = await runs.start({ source: { kind: 'flow', ref: 'deploy', version: 3 } });
    expect(await done).toMatchObject({ status: 'succeeded', workflowName: 'deploy-v3', trigger: 'api' });
    await expect(runs.start({ source: { kind: 'flwo', ref: 'deploy' } })).rejects.toThrow(
      'source: no workflow source of kind "flwo" (did you mean "flow"?) (known: file, content, flow)',
    );
    expect(() => runs.registerSource('flow', async () => ({ content: '', name: 'x' }))).toThrow('already registered');
    expect(() => runs.registerSource('file', async () => ({ content: '', name: 'x' }))).toThrow('already registered');
  });

  it('reports a missing file as bad input', async () => {
    await expect(runs.start({ source: { file: '/nonexistent/wf.yaml' } })).rejects.toThrow(
      'workflow file /nonexistent/wf.yaml does not exist',
    );
  });
});

async function until(check: () => unknown, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a process runs (a zombie waiting for its parent to reap it has ended). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the environment workflow code sees', () => {
  it('is engine.script_env only, in scripts, templates, os.getenv and os.execute; never RUNNER_*', async () => {
    process.env.MASTER_ONLY_SECRET = 'hunter2-master';
    process.env.RUNNER_SOME_TOKEN = 'runner-token-value';
    try {
      const { record } = await runContent(`
version: "1.0"
tasks:
  - name: look
    exec:
      script: |
        local from_template = "{{ env.MASTER_ONLY_SECRET | default('unset') }}|{{ env.HOME }}"
        local out = io.popen("echo \${MASTER_ONLY_SECRET:-unset}:\${RUNNER_SOME_TOKEN:-unset}"):read("*l")
        return true, table.concat({ tostring(env.MASTER_ONLY_SECRET), tostring(os.getenv("MASTER_ONLY_SECRET")),
          tostring(os.getenv("RUNNER_SOME_TOKEN")), tostring(env.HOME), from_template, out }, "|")
`);
      expect(record.status).toBe('succeeded');
      expect(record.tasks[0].message).toBe(`nil|nil|nil|${process.env.HOME}|unset|${process.env.HOME}|unset:unset`);
      expect(JSON.stringify(record)).not.toContain('hunter2-master');
    } finally {
      delete process.env.MASTER_ONLY_SECRET;
      delete process.env.RUNNER_SOME_TOKEN;
    }
  });
});
