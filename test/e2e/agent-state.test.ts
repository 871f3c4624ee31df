// state.* in tasks delegated to a real agent: a `runner server` master and a `runner agent start`
// agent (web-1). The agent keeps no state: each call travels over its stream to the master, which
// runs it on its store in the delegated run's scopes. What the agent's task stored is what a later
// task on the master reads, a second run sees state.changed false for the same value, and a
// dry-run compares without writing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiRun, runToEnd as runUntilEnd, spawnRunner, startFleet, stopAll } from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const children: Child[] = [];
let masterDir: string;
let base: string;

beforeAll(async () => {
  ({ masterDir, base } = await startFleet('runner-e2e-state', ['web-1'], children));
}, 60_000);

afterAll(() => {
  stopAll(children);
});

const runToEnd = (body: Record<string, unknown>) => runUntilEnd<ApiRun>({ masterDir, base }, body);

// The render-then-restart pattern: render on the agent, restart on the master only when it changed.
const RENDER_THEN_RESTART = `version: "1.0"
vars:
  version: "0"
tasks:
  - name: render
    delegate_to: web-1
    # In dry-run the script runs, its side effects reported only (state compares, writes nothing).
    dry_run: run
    exec:
      script: |
        local changed = state.changed("app_conf", { version = vars.version, port = 8080 })
        local placed = state.set("rendered_on", "web-1", { scope = "task" })
        state.set("last_version", vars.version, { scope = "global" })
        return true, "", {
          changed = changed,
          placed = placed,
          seen = state.get("app_conf"),
          keys = state.keys(),
          task_keys = state.keys({ scope = "task" }),
        }
  - name: restart
    when: "{{ tasks.render.outputs.changed }}"
    exec:
      script: |
        return true, "", {
          conf = state.get("app_conf"),
          last = state.get("last_version", { scope = "global" }),
          render_task_value = state.get("rendered_on", { scope = "task" }),
        }
`;

const run = (version: string, extra: Record<string, unknown> = {}) =>
  runToEnd({ content: RENDER_THEN_RESTART, workflow_name: 'app', vars: { version }, ...extra });

function task(r: ApiRun, name: string) {
  const found = r.tasks.find((t) => t.name === name);
  expect(found, `task ${name} in ${JSON.stringify(r.tasks.map((t) => t.name))}`).toBeDefined();
  return found as ApiRun['tasks'][number];
}

describe('state in tasks delegated to a real agent', () => {
  it('stores on the master: a later master task reads it, a second run sees changed false', async () => {
    const first = await run('1.0');
    expect(first.status, JSON.stringify(first)).toBe('succeeded');
    const render = task(first, 'render');
    expect(render.agent).toBe('web-1');
    expect(render.outputs).toEqual({
      changed: true,
      placed: { changed: true },
      seen: { port: 8080, version: '1.0' },
      keys: ['app_conf'],
      task_keys: ['rendered_on'],
    });
    // The master's own task reads what the agent stored, in the same workflow and global scopes;
    // the task scope is render's, not restart's.
    expect(task(first, 'restart')).toMatchObject({
      status: 'succeeded',
      outputs: { conf: { port: 8080, version: '1.0' }, last: '1.0' },
    });
    expect(task(first, 'restart').outputs).not.toHaveProperty('render_task_value');

    const second = await run('1.0');
    expect(second.status).toBe('succeeded');
    expect(task(second, 'render').outputs).toMatchObject({ changed: false, placed: { changed: false } });
    expect(task(second, 'restart').status).toBe('skipped');
  });

  it('in dry-run compares on the master without writing', async () => {
    const dry = await run('2.0', { dry_run: true });
    expect(dry.status, JSON.stringify(dry)).toBe('succeeded');
    expect(task(dry, 'render').outputs).toMatchObject({
      changed: true,
      placed: { changed: false, skipped: true, would_change: false },
      seen: { port: 8080, version: '1.0' },
    });
    // Nothing was written: the real run with the same value still sees a change.
    const real = await run('2.0');
    expect(task(real, 'render').outputs).toMatchObject({ changed: true, seen: { port: 8080, version: '2.0' } });
    expect(task(real, 'restart').outputs).toMatchObject({ conf: { version: '2.0' }, last: '2.0' });
  });

  it('a failing state call fails the delegated task with the message from the master side', async () => {
    const bad = await runToEnd({
      workflow_name: 'app',
      content: `version: "1.0"
tasks:
  - name: big
    delegate_to: web-1
    exec:
      script: |
        state.set("blob", string.rep("x", 2 * 1024 * 1024))
`,
    });
    expect(bad.status).toBe('failed');
    expect(task(bad, 'big').message).toMatch(/state\.set: value is 2097154 bytes as JSON \(at most 1048576\)/);
  });
});
