// Agent groups with real processes: a `runner server` master and two `runner agent start` agents
// (web-1, web-2). Groups are managed over REST and with `runner agent group`, filter the agents
// list, and serve as a `delegate_to` target (`group:web`) that runs a task on every member; a run
// naming an unknown group is refused before any task runs (REST 400, `runner run` exit 2).
import { parse as parseYaml } from 'yaml';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callApi,
  runRunner,
  runToEnd,
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
  work = tempDataDir('runner-e2e-groups-work-');
  ({ masterDir, base } = await startFleet('runner-e2e-groups', ['web-1', 'web-2'], children));
}, 60_000);

afterAll(() => {
  stopAll(children);
});

const api = <T>(method: string, path: string, body?: unknown) => callApi<T>({ masterDir, base }, method, path, body);

const cli = (...args: string[]) => runRunner(['agent', 'group', ...args], { env: { RUNNER_DATA_DIR: masterDir } });

interface Group {
  name: string;
  description: string;
  members: string[];
}

describe('agent groups over REST', () => {
  it('creates a group, adds members in bulk, filters the agents by it, removes and deletes', async () => {
    const created = await api<Group>('POST', '/agent-groups', { name: 'rest', description: 'over REST' });
    expect(created.status).toBe(201);
    const added = await api<Group>('POST', '/agent-groups/rest/members', { agents: ['web-2', 'gone-1'] });
    expect(added.body.members).toEqual(['gone-1', 'web-2']);

    // The unregistered member is still a member; the filter answers the agents the master knows.
    const filtered = await api<{ agents: { name: string }[] }>('GET', '/agents?group=rest');
    expect(filtered.body.agents.map((a) => a.name)).toEqual(['web-2']);

    const removed = await api<Group>('DELETE', '/agent-groups/rest/members?agents=gone-1');
    expect(removed.body.members).toEqual(['web-2']);
    expect((await api('DELETE', '/agent-groups/rest')).status).toBe(204);
    const unknown = await api<{ error: { message: string } }>('GET', '/agents?group=rest');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toBe('group: unknown agent group "rest"');
  });
});

describe('runner agent group', () => {
  it('create, add, show, list, remove and delete through the master', async () => {
    const create = await cli('create', 'cli', 'web-1', '--description', 'made by the CLI');
    expect(create.stderr).toBe('');
    expect(create.stdout).toBe('agent group cli created with 1 agent\n');
    expect((await cli('add', 'cli', 'web-2', 'later-3')).stdout).toBe('agent group cli now has 3 agents\n');

    const show = await cli('show', 'cli');
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('description: made by the CLI');
    expect(show.stdout).toMatch(/later-3\s+not registered/);
    // online, or warning on a loaded machine: a connected agent's status either way.
    expect(show.stdout).toMatch(/web-1\s+(online|warning)/);

    const list = await cli('list', '-o', 'json');
    const listed = JSON.parse(list.stdout) as { groups: Group[] };
    expect(listed.groups.find((g) => g.name === 'cli')?.members).toEqual(['later-3', 'web-1', 'web-2']);
    // Every command built from the routes has the same three outputs.
    expect(parseYaml((await cli('list', '-o', 'yaml')).stdout)).toEqual(listed);
    expect((await cli('ls')).stdout).toMatch(/^NAME\s+MEMBERS\s+DESCRIPTION\n(.*\n)*cli\s+3\s+made by the CLI\n/);

    expect((await cli('remove', 'cli', 'later-3')).stdout).toBe('agent group cli now has 2 agents\n');
    expect((await cli('delete', 'cli')).stdout).toBe('agent group cli deleted\n');
    const gone = await cli('show', 'cli');
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('agent group "cli" does not exist');
  });

  it('refuses a bad group name with the rule, naming the field', async () => {
    const bad = await cli('create', 'web tier');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('name: group name "web tier" is not valid: use letters, digits');
  });
});

describe('delegate_to a group', () => {
  beforeAll(async () => {
    const made = await api('POST', '/agent-groups', { name: 'web', members: ['web-1', 'web-2'] });
    expect(made.status).toBe(201);
  });

  const workflow = (name: string, target: string) => touchThenDelegate(work, name, target);

  it('runs the task on every member of the group', async () => {
    const { content, marker } = workflow('group-run', 'group:web');
    const run = await runToEnd<{ status: string; tasks: { name: string; agent: string; status: string }[] }>(
      { masterDir, base },
      { content, workflow_name: 'group-run' },
    );
    expect(run.status).toBe('succeeded');
    expect(existsSync(marker)).toBe(true);
    expect(run.tasks.map((t) => [t.name, t.agent, t.status])).toEqual([
      ['touch', 'localhost', 'succeeded'],
      ['ship@web-1', 'web-1', 'succeeded'],
      ['ship@web-2', 'web-2', 'succeeded'],
    ]);
  });

  it('over REST: an unknown group is a 400 with a did-you-mean; no task ran, no run recorded', async () => {
    const { content, marker } = workflow('group-unknown', 'group:wbe');
    const answer = await api<{ error: { code: string; message: string } }>('POST', '/workflows/run', {
      content,
      workflow_name: 'group-unknown',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_workflow');
    expect(answer.body.error.message).toMatch(
      /^group-unknown:10:5: tasks\[1\]\.delegate_to: task "ship": unknown agent group "wbe" \(did you mean "web"\?\) \(agent groups: .*web\)$/,
    );
    expect(existsSync(marker)).toBe(false);
    const { body: list } = await api<{ executions: unknown[] }>('GET', '/executions?workflow=group-unknown');
    expect(list.executions).toEqual([]);
  });

  it('runner run --delegate-to group:web through the master runs every task on both members', async () => {
    const file = join(work, 'cli-group.yaml');
    writeFileSync(file, 'version: "1.0"\ntasks:\n  - name: hello\n    exec:\n      script: return true\n');
    const result = await runRunner(
      ['run', 'cli-group', '--file', file, '--yes', '--delegate-to', 'group:web', '-o', 'json'],
      {
        env: { RUNNER_DATA_DIR: masterDir },
      },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { body: list } = await api<{ executions: { id: string }[] }>('GET', '/executions?workflow=cli-group');
    const { body: run } = await api<{ tasks: { agent: string }[] }>('GET', `/executions/${list.executions[0].id}`);
    expect(run.tasks.map((t) => t.agent)).toEqual(['web-1', 'web-2']);
  });

  it('runner run through the master exits 2 for an unknown group; the first task did not run', async () => {
    const { content, marker } = workflow('cli-unknown-group', 'group:db');
    const file = join(work, 'cli-unknown-group.yaml');
    writeFileSync(file, content);
    const result = await runRunner(['run', 'cli-unknown-group', '--file', file, '--yes'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('tasks[1].delegate_to: task "ship": unknown agent group "db"');
    expect(existsSync(marker)).toBe(false);
  });
});
