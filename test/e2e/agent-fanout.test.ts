// Fan-out and early refusal with real processes: a `runner server` master and two `runner agent
// start` agents (web-1, web-2). One task delegated to both runs on both at once (a 2 s sleep takes
// about 2 s, not 4), `forks` bounds it, and a run naming an agent the master does not know is
// refused before any task runs, over REST (400) and by `runner run` through the master (exit 2).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiRun,
  callApi,
  runRunner,
  runToEnd as runUntilEnd,
  spawnRunner,
  startFleet,
  stopAll,
  tempDataDir,
  touchThenDelegate,
} from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const children: Child[] = [];
let masterDir: string;
let base: string;
let work: string;

beforeAll(async () => {
  work = tempDataDir('runner-e2e-fanout-work-');
  ({ masterDir, base } = await startFleet('runner-e2e-fanout', ['web-1', 'web-2'], children));
}, 60_000);

afterAll(() => {
  stopAll(children);
});

const api = <T>(method: string, path: string, body?: unknown) => callApi<T>({ masterDir, base }, method, path, body);
const runToEnd = (body: Record<string, unknown>) => runUntilEnd<ApiRun>({ masterDir, base }, body);

const SLEEP_ON_BOTH = (forks = '') => `version: "1.0"
${forks}tasks:
  - name: nap
    delegate_to: [web-1, web-2]
    exec:
      script: |
        exec.run("sleep 1")
        return true
`;

/** Whether the two units' [start, end] intervals overlap. */
function overlap(run: ApiRun): boolean {
  const [a, b] = run.tasks.map((t) => [Date.parse(t.started_at ?? ''), Date.parse(t.completed_at ?? '')]);
  return a[0] < b[1] && b[0] < a[1];
}

describe('one task delegated to several agents', () => {
  it('runs on both at once: a 1 s task on two agents takes about 1 s, not 2', async () => {
    const run = await runToEnd({ content: SLEEP_ON_BOTH(), workflow_name: 'fanout' });
    expect(run.status).toBe('succeeded');
    expect(run.tasks.map((t) => [t.name, t.agent, t.status])).toEqual([
      ['nap@web-1', 'web-1', 'succeeded'],
      ['nap@web-2', 'web-2', 'succeeded'],
    ]);
    // At once: the two tasks' times overlap (a bound on the run's duration would fail on a busy
    // machine; the overlap cannot).
    expect(overlap(run)).toBe(true);
    expect(run.duration).toBeGreaterThanOrEqual(1);
  });

  it('forks: 1 in the workflow runs them one after the other', async () => {
    const run = await runToEnd({ content: SLEEP_ON_BOTH('forks: 1\n'), workflow_name: 'fanout-forks-1' });
    expect(run.status).toBe('succeeded');
    expect(overlap(run)).toBe(false);
    expect(run.duration).toBeGreaterThanOrEqual(2);
  });

  it('runner run --forks 1 --delegate-to web-1,web-2 through the master overrides the workflow', async () => {
    const file = join(work, 'forks-cli.yaml');
    writeFileSync(
      file,
      'version: "1.0"\nforks: 5\ntasks:\n  - name: nap\n    exec:\n      script: |\n        exec.run("sleep 0.5")\n        return true\n',
    );
    const result = await runRunner(
      ['run', 'forks-cli', '--file', file, '--yes', '--forks', '1', '--delegate-to', 'web-1,web-2', '-o', 'json'],
      { env: { RUNNER_DATA_DIR: masterDir } },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { body: list } = await api<{ executions: { id: string }[] }>('GET', '/executions?workflow=forks-cli');
    const { body: run } = await api<ApiRun>('GET', `/executions/${list.executions[0].id}`);
    expect(run.tasks.map((t) => t.agent)).toEqual(['web-1', 'web-2']);
    expect(overlap(run)).toBe(false);
  });
});

describe('a run naming an unknown agent is refused before any task runs', () => {
  const workflow = (name: string, target: string) => touchThenDelegate(work, name, target);

  it('over REST: 400 naming the task and the agent with a did-you-mean; no run recorded', async () => {
    const { content, marker } = workflow('rest-unknown', '[web-1, wbe-2]');
    const answer = await api<{ error: { code: string; message: string } }>('POST', '/workflows/run', {
      content,
      workflow_name: 'rest-unknown',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_workflow');
    expect(answer.body.error.message).toBe(
      'rest-unknown:10:5: tasks[1].delegate_to: task "ship": unknown agent "wbe-2" (did you mean "web-2"?) (known agents: web-1, web-2)',
    );
    expect(existsSync(marker)).toBe(false);
    const { body: list } = await api<{ executions: unknown[] }>('GET', '/executions?workflow=rest-unknown');
    expect(list.executions).toEqual([]);
  });

  it('over REST: a template that reads only vars is resolved before the run', async () => {
    const { content, marker } = workflow('rest-template', '["{{ vars.target }}"]');
    const answer = await api<{ error: { message: string } }>('POST', '/workflows/run', {
      content,
      workflow_name: 'rest-template',
      vars: { target: 'web-9' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toContain('task "ship": unknown agent "web-9"');
    expect(existsSync(marker)).toBe(false);
  });

  it('over REST: delegate_to of the run names the field', async () => {
    const { content } = workflow('rest-run-agents', '[web-1]');
    const answer = await api<{ error: { code: string; message: string } }>('POST', '/workflows/run', {
      content,
      workflow_name: 'rest-run-agents',
      delegate_to: ['web-3'],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_input');
    expect(answer.body.error.message).toMatch(/^delegate_to: unknown agent "web-3" \(did you mean "web-[12]"\?\)/);
  });

  it('runner run through the master exits 2 naming the agent; the first task did not run', async () => {
    const { content, marker } = workflow('cli-unknown', 'web-7');
    const file = join(work, 'cli-unknown.yaml');
    writeFileSync(file, content);
    const result = await runRunner(['run', 'cli-unknown', '--file', file, '--yes'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('tasks[1].delegate_to: task "ship": unknown agent "web-7"');
    expect(existsSync(marker)).toBe(false);
  });
});
