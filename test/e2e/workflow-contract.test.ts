import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunRequest, TaskResult } from '@runner/plugin-sdk';
import { bootEngine, ms, workflow, type EngineHarness } from './workflow-helpers.js';

/**
 * The workflow language's contract (shared/spec/workflow-language.md and plugins/workflow/README.md)
 * through the real engine: a kernel booted in this process with every builtin plugin of the
 * embedded profile, workflows written to real files, scripts run by the real Lua runtime.
 */

let h: EngineHarness;
beforeAll(async () => {
  h = await bootEngine();
});
afterAll(async () => {
  await h?.stop();
});

/** 1-based line of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`"${needle}" is not in the workflow`);
  return index + 1;
}

/** The error `engine.start` rejects with; asserts that nothing was recorded or announced. */
async function refused(name: string, text: string, request: Partial<RunRequest> = {}) {
  const file = h.write(name, text);
  const before = { runs: (await h.engine.list()).total, events: h.events.length };
  const error = await h.engine.start({ source: { file }, workflowName: name, ...request }).then(
    () => undefined,
    (e: unknown) => e as Error & { code: string; status: number; details?: { problems?: unknown[]; field?: string } },
  );
  expect(error, 'the run should have been refused').toBeDefined();
  expect({ runs: (await h.engine.list()).total, events: h.events.length }).toEqual(before);
  return { error: error as NonNullable<typeof error>, file };
}

const statuses = (tasks: TaskResult[]) => Object.fromEntries(tasks.map((t) => [t.name, t.status]));

describe('a task script', () => {
  it('succeeds when it returns nothing or true, fails on false or an error, with the message', async () => {
    const text = workflow(`
tasks:
  - name: nothing
    exec:
      script: local x = 1
  - name: plain-true
    exec:
      script: return true
  - name: true-with-message
    exec:
      script: return true, "all good"
  - name: plain-false
    ignore_errors: true
    exec:
      script: return false
  - name: false-with-message
    ignore_errors: true
    exec:
      script: return false, "disk full"
  - name: raises
    ignore_errors: true
    exec:
      script: |
        local x = 1
        error("boom " .. x)
  - name: raises-table
    ignore_errors: true
    exec:
      script: error({ code = 1 })
`);
    const { record, task, file } = await h.run('results', text);
    expect(statuses(record.tasks)).toEqual({
      nothing: 'succeeded',
      'plain-true': 'succeeded',
      'true-with-message': 'succeeded',
      'plain-false': 'ignored',
      'false-with-message': 'ignored',
      raises: 'ignored',
      'raises-table': 'ignored',
    });
    expect(task('nothing').message).toBeUndefined();
    expect(task('true-with-message').message).toBe('all good');
    expect(task('plain-false').message).toBe('the script returned false');
    expect(task('false-with-message').message).toBe('disk full');
    // The script's own line, then where that line is in the file.
    expect(task('raises').message).toBe(`raises:2: boom 1 (${file}:${lineOf(text, 'error("boom')})`);
    expect(task('raises-table').message).toBe(
      `raises-table:1: (error object is a table value) (${file}:${lineOf(text, 'error({ code')})`,
    );
    expect(task('raises').log.at(-1)).toMatchObject({ level: 'error', message: `failed: ${task('raises').message}` });
    expect(record.status).toBe('succeeded');
    expect(record.counts).toEqual({ succeeded: 3, ignored: 4 });
  });

  it('points a Lua error at its file line through {{ }} values, and at the script start when blocks moved lines', async () => {
    const text = workflow(`
vars: { a: "1" }
tasks:
  - name: valued
    ignore_errors: true
    exec:
      script: |
        local a = "{{ vars.a }}"
        error("valued " .. a)
  - name: blocks
    ignore_errors: true
    exec:
      script: |
        local x = 1
        {# a comment
           on two lines #}
        {% for i in [1, 2] %}
        x = x + {{ i }}
        {% endfor %}
        error("blocks " .. x)
`);
    const { task, file } = await h.run('lines', text);
    expect(task('valued').message).toBe(`valued:2: valued 1 (${file}:${lineOf(text, 'error("valued')})`);
    const line = Number(/^blocks:(\d+):/.exec(task('blocks').message ?? '')?.[1]);
    expect(task('blocks').message).toBe(
      `blocks:${line}: blocks 4 (line ${line} of the script as rendered; it starts at ${file}:${lineOf(text, 'local x = 1')})`,
    );
  });

  it('passes outputs (the third value) to later tasks, in Lua, templates and conditions', async () => {
    const text = workflow(`
tasks:
  - name: build
    exec:
      script: return true, "built", { artifact = "web-1.0.tgz", size = 3, nested = { list = { "a", "b" } } }
  - name: ship
    depends_on: [build]
    when: "{{ tasks.build.outputs.artifact == 'web-1.0.tgz' }}"
    exec:
      script: |
        local from_lua = tasks.build.outputs.artifact
        return true, "{{ tasks.build.outputs.artifact }}", {
          lua = from_lua,
          size = tasks.build.outputs.size + 1,
          second = tasks.build.outputs.nested.list[2],
          status = tasks.build.status,
        }
  - name: empty-outputs
    exec:
      script: return true, nil, {}
`);
    const { record, task } = await h.run('outputs', text);
    expect(task('build').outputs).toEqual({ artifact: 'web-1.0.tgz', size: 3, nested: { list: ['a', 'b'] } });
    expect(task('ship')).toMatchObject({
      status: 'succeeded',
      message: 'web-1.0.tgz',
      outputs: { lua: 'web-1.0.tgz', size: 4, second: 'b', status: 'succeeded' },
    });
    expect(task('empty-outputs').status).toBe('succeeded');
    expect(record.status).toBe('succeeded');
  });

  it('fails a task whose third value is not a table with named keys, or whose first is not a boolean', async () => {
    const text = workflow(`
tasks:
  - name: number-outputs
    ignore_errors: true
    exec:
      script: return true, "x", 42
  - name: list-outputs
    ignore_errors: true
    exec:
      script: return true, "x", { 1, 2 }
  - name: string-result
    ignore_errors: true
    exec:
      script: return "yes"
`);
    const { task } = await h.run('bad-returns', text);
    expect(task('number-outputs')).toMatchObject({
      status: 'ignored',
      message: 'the third return value (outputs) must be a table with named keys, got number',
    });
    expect(task('list-outputs')).toMatchObject({
      status: 'ignored',
      message: 'the third return value (outputs) must be a table with named keys, got a list',
    });
    expect(task('string-result')).toMatchObject({
      status: 'ignored',
      message: 'the script returned a string; a task returns nothing, true, or false [, message [, outputs]]',
    });
  });

  it('reads the globals of the contract: vars, values (localhost), item, loop_index, task, workflow, env, tasks, dry_run, modules', async () => {
    process.env.WF_CONTRACT_ENV = 'from-env';
    process.env.RUNNER_WF_CONTRACT_SECRET = 'hidden';
    try {
      const text = workflow(`
vars:
  app: web
values:
  localhost: { port: 8080, tags: [blue, green] }
  web-1: { port: 9 }
tasks:
  - name: first
    exec:
      script: return true, "first done"
  - name: globals
    depends_on: [first]
    loop: [x, y]
    exec:
      script: |
        return true, nil, {
          app = vars.app, port = values.port, tag = values.tags[2], item = item, index = loop_index,
          task = task.name, attempt = task.attempt, workflow = workflow.name, run_id = workflow.run_id,
          env = env.WF_CONTRACT_ENV == nil and env.PATH == ${JSON.stringify(process.env.PATH)}, getenv = os.getenv("WF_CONTRACT_ENV") == nil and os.getenv("PATH") == ${JSON.stringify(process.env.PATH)},
          runner_env = env.RUNNER_WF_CONTRACT_SECRET == nil and os.getenv("RUNNER_WF_CONTRACT_SECRET") == nil,
          first = tasks.first.status, first_message = tasks.first.message, dry = dry_run,
          modules = type(log) .. " " .. type(exec) .. " " .. type(file) .. " " .. type(state) .. " " .. type(goroutine) .. " " .. type(reliability),
        }
  - name: outside-loop
    exec:
      script: return true, nil, { item = item == nil, index = loop_index == nil }
`);
      const { record, task } = await h.run('globals', text);
      const common = {
        app: 'web',
        port: 8080,
        tag: 'green',
        task: 'globals',
        attempt: 1,
        workflow: 'globals',
        run_id: record.id,
        // engine.script_env: PATH among the defaults, a variable not on the list never.
        env: true,
        getenv: true,
        runner_env: true,
        first: 'succeeded',
        first_message: 'first done',
        dry: false,
        modules: 'table table table table table table',
      };
      expect(task('globals[x]').outputs).toEqual({ ...common, item: 'x', index: 1 });
      expect(task('globals[y]').outputs).toEqual({ ...common, item: 'y', index: 2 });
      expect(task('outside-loop').outputs).toEqual({ item: true, index: true });
    } finally {
      delete process.env.WF_CONTRACT_ENV;
      delete process.env.RUNNER_WF_CONTRACT_SECRET;
    }
  });

  it('has the Lua standard library of the contract: io.open/lines/read/write, os.getenv/remove/rename/tmpname/date/time/clock', async () => {
    const text = workflow(`
tasks:
  - name: stdlib
    exec:
      script: |
        local path = os.tmpname()
        local created = io.open(path, "r") ~= nil
        local f = assert(io.open(path, "w"))
        f:write("one\\ntwo\\n")
        f:close()
        local lines = {}
        for line in io.lines(path) do lines[#lines + 1] = line end
        local moved = path .. ".moved"
        assert(os.rename(path, moved))
        local old_gone = io.open(path, "r") == nil
        local rf = assert(io.open(moved, "r"))
        local first = rf:read("l")
        local rest = rf:read("a")
        rf:close()
        assert(os.remove(moved))
        io.write("to stdout\\n")
        local c1 = os.clock()
        return true, nil, {
          created = created, lines = table.concat(lines, ","), old_gone = old_gone, first = first, rest = rest,
          removed = io.open(moved, "r") == nil, home = os.getenv("HOME"), no_such = os.getenv("NO_SUCH_VARIABLE_X") == nil,
          date = os.date("!%Y-%m-%d %H:%M", 86400 + 3660), now = os.time() > 1700000000,
          clock = type(c1) == "number" and os.clock() >= c1, stdin = io.read("l") == nil,
        }
`);
    const { task } = await h.run('stdlib', text);
    expect(task('stdlib')).toMatchObject({
      status: 'succeeded',
      outputs: {
        created: true,
        lines: 'one,two',
        old_gone: true,
        first: 'one',
        rest: 'two\n',
        removed: true,
        home: process.env.HOME,
        no_such: true,
        date: '1970-01-02 01:01',
        now: true,
        clock: true,
        stdin: true,
      },
    });
    expect(task('stdlib').log).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'to stdout', fields: { stream: 'stdout' } }),
    );
  });

  it('makes os.exit raise an error (catchable) instead of ending the process', async () => {
    const text = workflow(`
tasks:
  - name: caught
    exec:
      script: |
        local ok, err = pcall(os.exit, 3)
        return true, tostring(ok) .. ": " .. err
  - name: uncaught
    exec:
      script: os.exit(0)
  - name: after
    exec:
      script: return true
`);
    const { task, file, record } = await h.run('exit', text);
    expect(task('caught')).toMatchObject({
      status: 'succeeded',
      message: 'false: os.exit cannot end the runner (return false to fail a task, error() to stop a script)',
    });
    expect(task('uncaught')).toMatchObject({
      status: 'failed',
      message: `uncaught:1: os.exit cannot end the runner (return false to fail a task, error() to stop a script) (${file}:${lineOf(text, 'os.exit(0)')})`,
    });
    expect(task('after')).toMatchObject({
      status: 'skipped',
      message: 'not run: the run stopped after uncaught failed',
    });
    // This process (which runs the engine) is still here to assert it.
    expect(record.status).toBe('failed');
  });
});

describe('templates', () => {
  it('renders Jinja in scripts and string fields (loop, when) with item and loop_index', async () => {
    const text = workflow(`
vars:
  app: web
  hosts: "h1, h2, h3"
tasks:
  - name: rendered
    loop: "{{ vars.hosts }}"
    when: "{{ item != 'h3' }}"
    exec:
      script: |
        {% if vars.app == 'web' %}
        local kind = "web tier"
        {% else %}
        local kind = "other"
        {% endif %}
        return true, "{{ vars.app | upper }} {{ item }} {{ loop_index }}", { kind = kind }
`);
    const { record, task } = await h.run('jinja', text);
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['rendered[h1]', 'succeeded', 'WEB h1 1'],
      ['rendered[h2]', 'succeeded', 'WEB h2 2'],
      ['rendered[h3]', 'skipped', "condition is false: {{ item != 'h3' }}"],
    ]);
    expect(task('rendered[h1]').outputs).toEqual({ kind: 'web tier' });
  });

  it('renders Go text/template syntax with template: go', async () => {
    const text = workflow(`
template: go
vars:
  app: web
tasks:
  - name: build
    exec:
      script: return true, "built", { artifact = "{{ .vars.app }}.tgz" }
  - name: go
    depends_on: [build]
    loop: [a, b]
    when: '{{ ne .item "b" }}'
    exec:
      script: return true, "{{ .vars.app }}-{{ .item }}-{{ .loop_index }}-{{ .tasks.build.outputs.artifact }}"
`);
    const { record } = await h.run('go-syntax', text);
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['build', 'succeeded', 'built'],
      ['go[a]', 'succeeded', 'web-a-1-web.tgz'],
      ['go[b]', 'skipped', 'condition is false: {{ ne .item "b" }}'],
    ]);
  });

  it('refuses an unknown variable before the run, naming it at file:line:column', async () => {
    const text = workflow(`
vars:
  app: web
tasks:
  - name: a
    exec:
      script: |
        local a = "{{ vars.ap }}"
        return true, "{{ itme }}"
`);
    const { error, file } = await refused('unknown-var', text);
    const line = lineOf(text, 'vars.ap');
    expect(error.code).toBe('invalid_workflow');
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      [
        `${file}:${line}:23: tasks[0].exec.script: "vars.ap" is not declared in vars (did you mean "vars.app"?)`,
        `${file}:${line + 1}:26: tasks[0].exec.script: unknown template variable "itme" (did you mean "item"?)`,
      ].join('\n'),
    );
  });

  it('fails the task (never renders an empty string) when a variable is missing at run time', async () => {
    const text = workflow(`
tasks:
  - name: a
    exec:
      script: return true, "a", { present = "yes" }
  - name: c
    depends_on: [a]
    exec:
      script: |
        local present = "{{ tasks.a.outputs.present }}"
        return true, "{{ tasks.a.outputs.missing }}"
`);
    const { task, file } = await h.run('missing-at-run', text);
    expect(task('c')).toMatchObject({
      status: 'failed',
      message: `unknown template variable "tasks.a.outputs.missing" at line 2, column 18 in task c script (${file}:${lineOf(text, 'outputs.missing')})`,
    });
  });
});

describe('failure and skipping', () => {
  it('stops the run at a failed task and reports what did not run as skipped, with why', async () => {
    const text = workflow(`
tasks:
  - name: pre
    exec:
      script: return true
  - name: a
    exec:
      script: error("a broke")
  - name: b
    depends_on: [a]
    exec:
      script: return true
  - name: c
    depends_on: [b]
    exec:
      script: return true
  - name: d
    exec:
      script: return true
`);
    const { record, task, file } = await h.run('stops', text);
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['pre', 'succeeded', undefined],
      ['a', 'failed', `a:1: a broke (${file}:${lineOf(text, 'a broke')})`],
      ['b', 'skipped', 'not run: it depends on a, which failed'],
      ['c', 'skipped', 'not run: it depends on b, which was not run'],
      ['d', 'skipped', 'not run: the run stopped after a failed'],
    ]);
    expect(task('b').attempts).toBe(0);
    expect(record).toMatchObject({
      status: 'failed',
      error: 'task a failed',
      counts: { succeeded: 1, failed: 1, skipped: 3 },
    });
  });

  it('goes on past a task with ignore_errors, which is reported ignored; the run succeeds', async () => {
    const text = workflow(`
tasks:
  - name: flaky
    ignore_errors: true
    exec:
      script: return false, "not today"
  - name: next
    depends_on: [flaky]
    exec:
      script: return true, tasks.flaky.status
`);
    const { record, task } = await h.run('ignored', text);
    expect(task('flaky')).toMatchObject({ status: 'ignored', message: 'not today' });
    expect(task('next')).toMatchObject({ status: 'succeeded', message: 'ignored' });
    expect(record).toMatchObject({ status: 'succeeded', counts: { ignored: 1, succeeded: 1 } });
    expect(record.error).toBeUndefined();
  });
});

describe('when', () => {
  it('skips (does not fail) a task whose condition is false; its dependents still run', async () => {
    const text = workflow(`
vars:
  env: dev
tasks:
  - name: prod-only
    when: "{{ vars.env == 'prod' }}"
    exec:
      script: error("must not run")
  - name: after
    depends_on: [prod-only]
    exec:
      script: return true, tasks["prod-only"].status
  - name: never
    when: false
    exec:
      script: error("must not run")
  - name: always
    when: "yes"
    exec:
      script: return true
`);
    const { record, task } = await h.run('when', text);
    expect(task('prod-only')).toMatchObject({
      status: 'skipped',
      attempts: 0,
      message: "condition is false: {{ vars.env == 'prod' }}",
    });
    expect(task('after')).toMatchObject({ status: 'succeeded', message: 'skipped' });
    expect(task('never')).toMatchObject({ status: 'skipped', message: 'condition is false: false' });
    expect(task('always').status).toBe('succeeded');
    expect(record.status).toBe('succeeded');
  });
});

describe('retry', () => {
  it('tries again with backoff; task.attempt counts the tries', async () => {
    const text = workflow(`
tasks:
  - name: flaky
    retry: { attempts: 3, delay: 100ms, backoff: 2 }
    exec:
      script: |
        if task.attempt < 3 then error("attempt " .. task.attempt) end
        return true, "ok on " .. task.attempt
`);
    const { task, events, file } = await h.run('retry', text);
    const where = `${file}:${lineOf(text, 'error("attempt')}`;
    const t = task('flaky');
    expect(t).toMatchObject({ status: 'succeeded', attempts: 3, message: 'ok on 3' });
    expect(t.log.map((l) => [l.level, l.message])).toEqual([
      ['warn', `attempt 1 of 3 failed: flaky:1: attempt 1 (${where}); retrying in 100 ms`],
      ['warn', `attempt 2 of 3 failed: flaky:1: attempt 2 (${where}); retrying in 200 ms`],
    ]);
    // Waits of 100 and 200 ms; the upper bound only guards against a hang.
    expect(t.duration).toBeGreaterThanOrEqual(0.3);
    expect(t.duration).toBeLessThan(10);
    expect(
      events.filter((e) => e.type.startsWith('task.')).map((e) => [e.type, (e.data as { attempt: number }).attempt]),
    ).toEqual([
      ['task.started', 1],
      ['task.completed', 3],
    ]);
  });

  it('fails with the last error once the attempts are spent; max_delay caps the waits', async () => {
    const text = workflow(`
tasks:
  - name: broken
    retry: { attempts: 4, delay: 50ms, backoff: 10, max_delay: 120ms }
    exec:
      script: error("still broken on " .. task.attempt)
`);
    const { task, file } = await h.run('retry-spent', text);
    const where = `${file}:${lineOf(text, 'still broken')}`;
    expect(task('broken')).toMatchObject({
      status: 'failed',
      attempts: 4,
      message: `broken:1: still broken on 4 (${where})`,
    });
    expect(
      task('broken')
        .log.filter((l) => l.level === 'warn')
        .map((l) => l.message.replace(/.*; /, '')),
    ).toEqual(['retrying in 50 ms', 'retrying in 120 ms', 'retrying in 120 ms']);
    expect(task('broken').duration).toBeGreaterThanOrEqual(0.29);
  });

  it('reads a bare integer as attempts with the default delay of 1s', async () => {
    const text = workflow(`
tasks:
  - name: twice
    retry: 2
    exec:
      script: if task.attempt == 1 then return false, "first try" end
`);
    const { task } = await h.run('retry-bare', text);
    expect(task('twice')).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(task('twice').log[0].message).toBe('attempt 1 of 2 failed: first try; retrying in 1 s');
    expect(task('twice').duration).toBeGreaterThanOrEqual(1);
  });
});

describe('timeout', () => {
  it('stops a spinning script and a waiting one, and kills the command it waits for', async () => {
    const pidFile = join(h.dir, 'sleeper.pid');
    const text = workflow(`
vars:
  pid_file: ${pidFile}
tasks:
  - name: spin
    timeout: 300ms
    ignore_errors: true
    exec:
      script: while true do end
  - name: sleepy
    timeout: 400ms
    ignore_errors: true
    exec:
      script: |
        exec.run("echo $$ > " .. vars.pid_file .. "; exec sleep 30")
        return true
`);
    const { task, file, record } = await h.run('timeout', text);
    expect(task('spin')).toMatchObject({
      status: 'ignored',
      message: `timed out after 300 ms (at spin:1) (${file}:${lineOf(text, 'while true')})`,
    });
    expect(task('sleepy')).toMatchObject({
      status: 'ignored',
      message: `timed out after 400 ms (at sleepy:1) (${file}:${lineOf(text, 'exec.run(')})`,
    });
    for (const t of [task('spin'), task('sleepy')]) {
      expect(t.duration).toBeGreaterThanOrEqual(0.29);
      expect(t.duration).toBeLessThan(5);
    }
    expect(record.duration).toBeLessThan(10);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await vi.waitFor(() => expect(() => process.kill(pid, 0)).toThrow(), { timeout: 5000, interval: 50 });
  });
});

describe('loop', () => {
  it('runs once per item, each reported as name[item], one after the other with parallel 1', async () => {
    const text = workflow(`
tasks:
  - name: per-host
    loop: [web-1, web-2, web-3]
    exec:
      script: |
        exec.run("sleep 0.1")
        return true, "hello from " .. item
  - name: mappings
    loop:
      - { host: db-1, port: 5432 }
      - { name: cache }
      - { port: 1 }
    exec:
      script: return true, tostring(item.port)
`);
    const { record } = await h.run('loop-seq', text);
    expect(record.tasks.map((t) => [t.name, t.task, t.item, t.message])).toEqual([
      ['per-host[web-1]', 'per-host', 'web-1', 'hello from web-1'],
      ['per-host[web-2]', 'per-host', 'web-2', 'hello from web-2'],
      ['per-host[web-3]', 'per-host', 'web-3', 'hello from web-3'],
      ['mappings[db-1]', 'mappings', { host: 'db-1', port: 5432 }, '5432'],
      ['mappings[cache]', 'mappings', { name: 'cache' }, 'nil'],
      ['mappings[3]', 'mappings', { port: 1 }, '1'],
    ]);
    for (let i = 1; i < record.tasks.length; i++) {
      expect(ms(record.tasks[i].startedAt)).toBeGreaterThanOrEqual(ms(record.tasks[i - 1].completedAt));
    }
  });

  it('runs items at the same time when parallel allows, never more than the limit', async () => {
    const text = workflow(`
parallel: 2
tasks:
  - name: fan
    loop: [1, 2, 3, 4]
    exec:
      script: exec.run("sleep 0.3")
`);
    const { record } = await h.run('loop-par', text);
    expect(record.tasks.map((t) => t.name)).toEqual(['fan[1]', 'fan[2]', 'fan[3]', 'fan[4]']);
    expect(maxOverlap(record.tasks)).toBe(2);
  });

  it('runs all items at once with parallel N >= items: every item starts before any ends', async () => {
    const text = workflow(`
parallel: 3
tasks:
  - name: all
    loop: [a, b, c]
    exec:
      script: exec.run("sleep 0.3")
`);
    const { record } = await h.run('loop-all', text);
    const lastStart = Math.max(...record.tasks.map((t) => ms(t.startedAt)));
    const firstEnd = Math.min(...record.tasks.map((t) => ms(t.completedAt)));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it('runs every item even when one fails; the task fails and its dependents are skipped', async () => {
    const text = workflow(`
tasks:
  - name: each
    loop: [a, b, c]
    exec:
      script: if item == "b" then return false, "b is bad" end
  - name: after
    depends_on: [each]
    exec:
      script: return true
`);
    const { record } = await h.run('loop-fail', text);
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['each[a]', 'succeeded', undefined],
      ['each[b]', 'failed', 'b is bad'],
      ['each[c]', 'succeeded', undefined],
      ['after', 'skipped', 'not run: it depends on each, which failed'],
    ]);
    expect(record).toMatchObject({ status: 'failed', error: 'task each failed' });
  });

  it('records a loop with no items as skipped, and its dependents run', async () => {
    const text = workflow(`
vars:
  hosts: ""
tasks:
  - name: none
    loop: "{{ vars.hosts }}"
    exec:
      script: error("no item, no run")
  - name: after
    depends_on: [none]
    exec:
      script: return true
`);
    const { record } = await h.run('loop-empty', text);
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['none', 'skipped', 'not run: no loop item or agent to run it for'],
      ['after', 'succeeded', undefined],
    ]);
    expect(record.status).toBe('succeeded');
  });

  it('fails (and records) a task whose loop does not render, before any item runs', async () => {
    const text = workflow(`
tasks:
  - name: a
    exec:
      script: return true
  - name: b
    depends_on: [a]
    loop: "{{ tasks.a.outputs.hosts }}"
    exec:
      script: return true
  - name: c
    depends_on: [b]
    exec:
      script: return true
`);
    const { record, events } = await h.run('loop-unrendered', text);
    const message = 'unknown template variable "tasks.a.outputs.hosts" at line 1, column 4 in task b loop';
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['a', 'succeeded', undefined],
      ['b', 'failed', message],
      ['c', 'skipped', 'not run: it depends on b, which failed'],
    ]);
    expect(events.find((e) => e.type === 'task.failed')?.data).toEqual({
      workflow_name: 'loop-unrendered',
      run_id: record.id,
      task_name: 'b',
      agent: 'localhost',
      status: 'failed',
      attempt: 0,
      duration: 0,
      error: message,
    });
  });
});

describe('parallel', () => {
  it('runs tasks in file order, one at a time, with the default parallel 1; a dependency on a later task waits for it', async () => {
    const text = workflow(`
tasks:
  - name: first
    depends_on: [second]
    exec:
      script: exec.run("sleep 0.05")
  - name: second
    exec:
      script: exec.run("sleep 0.05")
  - name: third
    exec:
      script: exec.run("sleep 0.05")
`);
    const { record } = await h.run('order', text);
    expect(record.tasks.map((t) => t.name)).toEqual(['second', 'first', 'third']);
    expect(maxOverlap(record.tasks)).toBe(1);
  });

  it('overlaps independent tasks up to the limit; a dependent waits for all it depends on', async () => {
    const text = workflow(`
parallel: 2
tasks:
  - name: a
    exec:
      script: exec.run("sleep 0.3")
  - name: b
    exec:
      script: exec.run("sleep 0.3")
  - name: c
    exec:
      script: exec.run("sleep 0.3")
  - name: d
    depends_on: [a, b]
    exec:
      script: return true
`);
    const { record, task } = await h.run('parallel', text);
    expect(maxOverlap(record.tasks)).toBe(2);
    expect(ms(task('a').startedAt)).toBeLessThan(ms(task('b').completedAt));
    expect(ms(task('d').startedAt)).toBeGreaterThanOrEqual(
      Math.max(ms(task('a').completedAt), ms(task('b').completedAt)),
    );
  });

  it('lets running units finish when one fails, and records the loop items that never started', async () => {
    const text = workflow(`
parallel: 2
tasks:
  - name: breaks
    exec:
      script: return false, "broken"
  - name: slow
    loop: [1, 2, 3]
    exec:
      script: exec.run("sleep 0.3")
`);
    const { record } = await h.run('drop', text);
    expect(record.tasks.map((t) => [t.name, t.status, t.message])).toEqual([
      ['breaks', 'failed', 'broken'],
      ['slow[1]', 'succeeded', undefined],
      ['slow[2]', 'skipped', 'not run: the run stopped after breaks failed'],
      ['slow[3]', 'skipped', 'not run: the run stopped after breaks failed'],
    ]);
    expect(record.status).toBe('failed');
  });
});

describe('groups, vars and values', () => {
  const text = workflow(`
vars:
  app: web
values:
  localhost: { port: 8080, db: { host: db-1, port: 5432 } }
groups:
  deploy: [ship]
  checks: [lint]
tasks:
  - name: fetch
    exec:
      script: return true
  - name: build
    depends_on: [fetch]
    exec:
      script: return true, vars.app
  - name: lint
    exec:
      script: return true
  - name: ship
    depends_on: [build]
    exec:
      script: return true, vars.app .. ":" .. values.port .. ":" .. values.db.host .. ":" .. values.db.port
`);

  it('runs a group: its tasks and what they depend on, transitively, and nothing else', async () => {
    const { record } = await h.run('groups', text, { group: 'deploy' });
    expect(record.tasks.map((t) => [t.name, t.status])).toEqual([
      ['fetch', 'succeeded'],
      ['build', 'succeeded'],
      ['ship', 'succeeded'],
    ]);
  });

  it('refuses an unknown group, listing the known ones', async () => {
    const { error } = await refused('groups', text, { group: 'deplyo' });
    expect(error).toMatchObject({
      code: 'invalid_input',
      status: 400,
      message: 'unknown group "deplyo" (did you mean "deploy"?); known groups: deploy, checks',
      details: { field: 'group' },
    });
  });

  it('applies vars overrides and deep-merges values over the file', async () => {
    const { task } = await h.run('overrides', text, {
      vars: { app: 'api' },
      values: { localhost: { port: 9090, db: { port: 6432 } } },
    });
    expect(task('ship').message).toBe('api:9090:db-1:6432');
  });

  it('refuses a var the workflow does not declare', async () => {
    const { error } = await refused('overrides', text, { vars: { ap: 'api' } });
    expect(error).toMatchObject({
      code: 'invalid_input',
      message: '--var "ap=api": the workflow has no variable "ap" (did you mean "app"?); declared: app',
      details: { field: 'vars' },
    });
  });
});

describe('dry-run', () => {
  it('skips scripts by default; with dry_run: run, side effects only report and read-only calls work', async () => {
    const target = join(h.dir, 'dry-run-target.txt');
    const existing = join(h.dir, 'dry-run-existing.txt');
    writeFileSync(existing, 'already here');
    const text = workflow(`
vars:
  target: ${target}
  existing: ${existing}
tasks:
  - name: default-skip
    exec:
      script: error("must not run in a dry run")
  - name: opted-in
    dry_run: run
    exec:
      script: |
        local w = file.write(vars.target, "hello")
        local e = exec.run("touch " .. vars.target)
        return true, nil, {
          dry = dry_run, changed = w.changed, skipped = w.skipped, note = w.note,
          exec_success = e.success, exec_note = e.note, exec_code = e.exit_code,
          read = file.read(vars.existing), exists = file.exists(vars.existing),
        }
`);
    const { record, task } = await h.run('dry', text, { dryRun: true });
    expect(task('default-skip')).toMatchObject({
      status: 'skipped',
      message: 'dry-run: script not run (set dry_run: run to run it with side effects reported only)',
    });
    expect(task('opted-in')).toMatchObject({
      status: 'succeeded',
      outputs: {
        dry: true,
        // In a dry run `changed` says what the real run would change (issue 10: dry-run that still flows).
        changed: true,
        skipped: true,
        note: `dry-run: would write ${target} (5 bytes)`,
        exec_success: true,
        exec_note: `dry-run: would run: touch ${target}`,
        exec_code: 0,
        read: 'already here',
        exists: true,
      },
    });
    expect(existsSync(target)).toBe(false);
    expect(record).toMatchObject({ status: 'succeeded', dryRun: true });
  });
});

describe('events', () => {
  it('emits workflow.started, task.started and task.completed/failed per task and loop item, then workflow.failed', async () => {
    const text = workflow(`
tasks:
  - name: ok
    exec:
      script: return true
  - name: each
    loop: [a, b]
    exec:
      script: return true
  - name: off
    when: false
    exec:
      script: return true
  - name: tolerated
    ignore_errors: true
    exec:
      script: return false, "meh"
  - name: broken
    exec:
      script: return false, "broken"
  - name: never
    depends_on: [broken]
    exec:
      script: return true
`);
    const { record, events } = await h.run('events', text);
    const run = { workflow_name: 'events', run_id: record.id };
    const task = (type: string, name: string, status: string, attempt: number, error?: string) => ({
      type,
      data: {
        ...run,
        task_name: name,
        agent: 'localhost',
        status,
        attempt,
        duration: expect.any(Number),
        ...(error ? { error } : {}),
      },
    });
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'workflow.started',
        data: {
          ...run,
          status: 'running',
          duration: 0,
          started_at: Math.floor(ms(record.startedAt) / 1000),
          completed_at: 0,
        },
      },
      task('task.started', 'ok', 'running', 1),
      task('task.completed', 'ok', 'succeeded', 1),
      task('task.started', 'each[a]', 'running', 1),
      task('task.completed', 'each[a]', 'succeeded', 1),
      task('task.started', 'each[b]', 'running', 1),
      task('task.completed', 'each[b]', 'succeeded', 1),
      task('task.started', 'off', 'running', 1),
      task('task.completed', 'off', 'skipped', 1),
      task('task.started', 'tolerated', 'running', 1),
      task('task.failed', 'tolerated', 'ignored', 1, 'meh'),
      task('task.started', 'broken', 'running', 1),
      task('task.failed', 'broken', 'failed', 1, 'broken'),
      {
        type: 'workflow.failed',
        data: {
          ...run,
          status: 'failed',
          duration: record.duration,
          started_at: Math.floor(ms(record.startedAt) / 1000),
          completed_at: Math.floor(ms(record.completedAt) / 1000),
        },
      },
    ]);
    for (const e of events.filter((e) => e.type.startsWith('task.')))
      expect((e.data as { duration: number }).duration).toBeGreaterThanOrEqual(0);
    // Bus timestamps are milliseconds and in order.
    expect(events.map((e) => e.timestamp)).toEqual([...events.map((e) => e.timestamp)].sort((a, b) => a - b));
  });

  it('ends a run without failures with workflow.completed', async () => {
    const { record, events } = await h.run(
      'events-ok',
      workflow(`
tasks:
  - name: only
    exec:
      script: return true
`),
    );
    expect(events.map((e) => e.type)).toEqual([
      'workflow.started',
      'task.started',
      'task.completed',
      'workflow.completed',
    ]);
    expect(events.at(-1)?.data).toMatchObject({
      workflow_name: 'events-ok',
      run_id: record.id,
      status: 'succeeded',
      duration: record.duration,
    });
  });
});

describe('validation before anything runs', () => {
  const cases: { name: string; text: string; messages: (file: string, text: string) => string[] }[] = [
    {
      name: 'unknown-key',
      text: workflow(`
tasks:
  - name: a
    dependson: [b]
    exec:
      script: return true
`),
      messages: (f, t) => [
        `${f}:${lineOf(t, 'dependson')}:5: tasks[0]: unknown key "dependson" (did you mean "depends_on"?)`,
      ],
    },
    {
      name: 'wrong-type',
      text: workflow(`
tasks:
  - name: a
    timeout: [30s]
    ignore_errors: yes
    exec:
      script: return true
`),
      messages: (f, t) => [
        `${f}:${lineOf(t, 'timeout')}:14: tasks[0].timeout: expected a duration such as "30s", found a list`,
        `${f}:${lineOf(t, 'ignore_errors')}:20: tasks[0].ignore_errors: expected true or false, found the string "yes"`,
      ],
    },
    {
      name: 'unknown-dependency',
      text: workflow(`
groups:
  deploy: [ship, shipp]
tasks:
  - name: build
    exec:
      script: return true
  - name: ship
    depends_on: [biuld]
    exec:
      script: return true
`),
      messages: (f, t) => [
        `${f}:${lineOf(t, 'deploy:')}:18: groups.deploy[1]: unknown task "shipp" (did you mean "ship"?)`,
        `${f}:${lineOf(t, 'biuld')}:18: tasks[1].depends_on[0]: unknown task "biuld" (did you mean "build"?)`,
      ],
    },
    {
      name: 'cycle',
      text: workflow(`
tasks:
  - name: a
    depends_on: [b]
    exec:
      script: return true
  - name: b
    depends_on: [a]
    exec:
      script: return true
`),
      messages: (f, t) => [`${f}:${lineOf(t, 'depends_on: [a]')}:18: circular dependency: a -> b -> a`],
    },
    {
      name: 'duplicate',
      text: workflow(`
tasks:
  - name: build
    exec:
      script: return true
  - name: build
    exec:
      script: return true
`),
      messages: (f) => [`${f}:6:11: tasks[1].name: duplicate task name "build" (first defined at line 3)`],
    },
    {
      name: 'lua-syntax',
      text: workflow(`
tasks:
  - name: fine
    exec:
      script: return true
  - name: broken
    exec:
      script: |
        local x = 1
        if x then
          x = @
        end
`),
      messages: (f, t) => [
        `${f}:${lineOf(t, 'x = @')}:15: tasks[1].exec.script: the script of task "broken" does not compile: unexpected symbol near '@'`,
      ],
    },
    {
      name: 'yaml',
      text: 'version: "1.0"\ntasks:\n\t- name: a\n',
      messages: (f) => [`${f}:3:1: invalid YAML: Tabs are not allowed as indentation`],
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.name} with file:line:column`, async () => {
      const { error, file } = await refused(c.name, c.text);
      const expected = c.messages(file, c.text);
      expect(error.code).toBe('invalid_workflow');
      expect(error.status).toBe(400);
      expect(error.message).toBe(expected.join('\n'));
      expect(error.details?.problems).toHaveLength(expected.length);
    });
  }

  it('refuses a task delegated to an agent in a process without agents (embedded), naming the agent', async () => {
    const text = workflow(`
tasks:
  - name: local
    exec:
      script: return true
  - name: ship
    delegate_to: [web-1, web-2]
    exec:
      script: return true
  - name: per-host
    loop: [web-3]
    delegate_to: "{{ item }}"
    exec:
      script: return true
`);
    const { error, file } = await refused('delegated', text);
    const why = 'no agent transport in this process (delegation needs a master with connected agents)';
    expect(error.code).toBe('invalid_workflow');
    expect(error.message).toBe(
      [
        `${file}:${lineOf(text, 'name: ship')}:5: tasks[1].delegate_to: task "ship" cannot delegate to agents "web-1", "web-2": ${why}`,
        `${file}:${lineOf(text, 'name: per-host')}:5: tasks[2].delegate_to: task "per-host" cannot delegate to agent "{{ item }}": ${why}`,
      ].join('\n'),
    );
    const viaRequest = await refused(
      'delegated-run',
      workflow(`
tasks:
  - name: local
    exec:
      script: return true
`),
      { delegateTo: ['web-9'] },
    );
    expect(viaRequest.error).toMatchObject({
      code: 'invalid_input',
      message: `delegate_to: cannot delegate to agent "web-9": ${why}`,
      details: { field: 'delegate_to' },
    });
  });

  it('refuses a missing file as bad input naming the file', async () => {
    const missing = join(h.dir, 'nope.yaml');
    await expect(h.engine.start({ source: { file: missing } })).rejects.toMatchObject({
      code: 'invalid_input',
      status: 400,
      message: `workflow file ${missing} does not exist`,
      details: { field: 'file' },
    });
  });
});

describe('the run record', () => {
  it('keeps every unit with its times, attempts, outputs and log, and lists runs newest first', async () => {
    const { record } = await h.run(
      'record',
      workflow(`
tasks:
  - name: talk
    exec:
      script: |
        log.info("hello", { who = "world" })
        log.debug("details")
        log.warn("careful")
        return true, "done", { n = 1 }
`),
    );
    const stored = await h.engine.get(record.id);
    expect(stored).toEqual(record);
    const talk = stored?.tasks[0] as TaskResult;
    expect(talk).toMatchObject({
      name: 'talk',
      task: 'talk',
      agent: 'localhost',
      status: 'succeeded',
      attempts: 1,
      message: 'done',
      outputs: { n: 1 },
      logTruncated: false,
    });
    expect(talk.log.map((l) => [l.level, l.message, l.fields])).toEqual([
      ['info', 'hello', { who: 'world' }],
      ['debug', 'details', undefined],
      ['warn', 'careful', undefined],
    ]);
    expect(ms(talk.startedAt)).toBeGreaterThanOrEqual(ms(record.startedAt));
    expect(ms(talk.completedAt)).toBeLessThanOrEqual(ms(record.completedAt));
    const { runs, total } = await h.engine.list({ limit: 1 });
    expect(total).toBeGreaterThan(1);
    expect(runs).toEqual([{ ...record, tasks: undefined }].map(({ tasks: _t, ...run }) => run));
  });
});

/** Most units running at one instant, from their recorded start and end times. */
function maxOverlap(tasks: TaskResult[]): number {
  const edges = tasks.flatMap((t) => [
    { at: ms(t.startedAt), delta: 1 },
    { at: ms(t.completedAt), delta: -1 },
  ]);
  // Ends before starts at the same millisecond: a unit that starts as another ends does not overlap it.
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let peak = 0;
  for (const e of edges) peak = Math.max(peak, (now += e.delta));
  return peak;
}
