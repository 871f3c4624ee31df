// Cancelling runs with real processes: a `runner server` master, a `runner agent start` agent, and
// `runner run` / `runner executions cancel` as a person types them. Every workflow starts a
// `sleep 300` through exec.run and writes its pid to a file; after the cancel that process must be
// gone and the run recorded `cancelled`, on the master and on the agent.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiRun,
  finished,
  localAuth,
  runRunner,
  spawnRunner,
  startFleet,
  stopAll,
  tempDataDir,
} from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const children: Child[] = [];
let masterDir: string;
let base: string;
let work: string;

beforeAll(async () => {
  work = tempDataDir('runner-e2e-cancel-work-');
  ({ masterDir, base } = await startFleet('runner-e2e-cancel', ['a1'], children));
}, 60_000);

afterAll(() => {
  stopAll(children);
});

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...localAuth(masterDir), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** A workflow whose first task starts `sleep 300` (here or on a1), records its pid and waits for it. */
function sleeper(name: string, where: 'master' | 'agent'): { file: string; pidFile: string } {
  const pidFile = join(work, `${name}.pid`);
  // In the master's workflow directory (engine.workflow_dirs): the API's `file` field reads only there.
  const file = join(masterDir, 'workflows', `${name}.yaml`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `version: "1.0"
tasks:
  - name: sleep
${where === 'agent' ? '    delegate_to: a1\n' : ''}    exec:
      script: |
        exec.run("sleep 300 & echo $! > ${pidFile}; wait")
        return true
  - name: after
    depends_on: [sleep]
    exec: { script: 'return true' }
`,
  );
  return { file, pidFile };
}

/** Whether a process runs (a zombie waiting to be reaped has ended). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The sleep's pid, once the task has started it. */
async function sleepPid(pidFile: string): Promise<number> {
  await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', `${pidFile} written`);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  expect(alive(pid)).toBe(true);
  return pid;
}

async function expectCancelled(id: string, pid: number): Promise<ApiRun> {
  await until(() => !alive(pid), `sleep ${pid} gone`, 10_000);
  const { body: run } = await api<ApiRun>('GET', `/executions/${id}`);
  expect(run.status).toBe('cancelled');
  expect(run.tasks.map((t) => [t.name, t.status])).toEqual([
    ['sleep', 'cancelled'],
    ['after', 'skipped'],
  ]);
  return run;
}

describe.each(['master', 'agent'] as const)('cancelling a run on the %s', (where) => {
  it('by the API: POST /executions/:id/cancel answers with the cancelled record', async () => {
    const { file, pidFile } = sleeper(`api-${where}`, where);
    const started = await api<{ id: string }>('POST', '/workflows/run', { file, workflow_name: `api-${where}` });
    expect(started.status).toBe(202);
    const pid = await sleepPid(pidFile);
    const answer = await api<ApiRun>('POST', `/executions/${started.body.id}/cancel`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 'cancelled',
      trigger: 'api',
      // The caller as the authentication guard named it: the master's local credential.
      user: 'local',
      cancelled_by: 'local',
    });
    const run = await expectCancelled(started.body.id, pid);
    if (where === 'agent') expect(run.tasks[0].agent).toBe('a1');
    // Cancelling an ended run returns it as it is.
    expect((await api<ApiRun>('POST', `/executions/${started.body.id}/cancel`)).body.status).toBe('cancelled');
  });

  it('by the CLI: runner executions cancel <id>', async () => {
    const { file, pidFile } = sleeper(`cli-${where}`, where);
    const started = await api<{ id: string }>('POST', '/workflows/run', { file, workflow_name: `cli-${where}` });
    const pid = await sleepPid(pidFile);
    const cancel = await runRunner(['executions', 'cancel', started.body.id], { env: { RUNNER_DATA_DIR: masterDir } });
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`run ${started.body.id} (cli-${where}) cancelled by local\n`);
    await expectCancelled(started.body.id, pid);
  });

  it('by Ctrl-C on runner run through the master: the run is cancelled and runner exits 130', async () => {
    const { file, pidFile } = sleeper(`sigint-${where}`, where);
    const run = spawnRunner(['run', `sigint-${where}`, '--file', file, '--yes', '--output', 'json'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    children.push(run);
    const pid = await sleepPid(pidFile);
    run.kill('SIGINT');
    const ended = await finished(run);
    expect(ended.code).toBe(130);
    expect(ended.stderr).toContain('SIGINT: cancelling the run on the master');
    const lines = ended.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const id = (lines.find((l) => typeof l.id === 'string') as { id: string } | undefined)?.id;
    const { body: runs } = await api<{ executions: ApiRun[] }>('GET', `/executions?workflow=sigint-${where}`);
    expect(runs.executions).toHaveLength(1);
    expect(runs.executions[0]).toMatchObject({
      status: 'cancelled',
      trigger: 'cli',
      user: 'local',
      cancelled_by: 'local',
    });
    if (id !== undefined) expect(id).toBe(runs.executions[0].id);
    await expectCancelled(runs.executions[0].id, pid);
  });
});

describe('who may cancel', () => {
  async function token(name: string, role: string): Promise<string> {
    const created = await api<{ token: string }>('POST', '/auth/tokens', { name, role });
    expect(created.status).toBe(201);
    return created.body.token;
  }
  const cancelAs = (bearer: string, id: string) =>
    fetch(`${base}/executions/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` } });

  it('a viewer is refused (403, the run goes on); an operator cancels and is recorded', async () => {
    const [viewer, operator] = [await token('cancel-viewer', 'viewer'), await token('cancel-operator', 'operator')];
    const { file, pidFile } = sleeper('roles', 'master');
    const started = await api<{ id: string }>('POST', '/workflows/run', { file, workflow_name: 'roles' });
    const pid = await sleepPid(pidFile);
    const refused = await cancelAs(viewer, started.body.id);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('workflow:cancel');
    expect(alive(pid)).toBe(true);
    expect((await api<ApiRun>('GET', `/executions/${started.body.id}`)).body.status).toBe('running');
    const allowed = await cancelAs(operator, started.body.id);
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ status: 'cancelled', user: 'local', cancelled_by: 'cancel-operator' });
    await expectCancelled(started.body.id, pid);
  });
});

describe('cancelling an embedded runner run', () => {
  it('by Ctrl-C: the sleep is gone, the run is cancelled by the user, runner exits 130', async () => {
    const dataDir = tempDataDir('runner-e2e-cancel-embedded-');
    const { file, pidFile } = sleeper('embedded', 'master');
    const run = spawnRunner(['run', 'embedded', '--file', file, '--output', 'json'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    children.push(run);
    const pid = await sleepPid(pidFile);
    run.kill('SIGINT');
    const ended = await finished(run);
    expect(ended.code).toBe(130);
    await until(() => !alive(pid), `sleep ${pid} gone`, 10_000);
    const final = ended.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.type === 'run')
      .pop();
    expect(final).toMatchObject({
      status: 'cancelled',
      trigger: 'cli',
      user: userInfo().username,
      cancelled_by: userInfo().username,
      error: 'cancelled: interrupted (SIGINT)',
    });
  });

  it('a missing run is a clear error', async () => {
    const cancel = await runRunner(['executions', 'cancel', 'no-such-run'], { env: { RUNNER_DATA_DIR: masterDir } });
    expect(cancel.code).not.toBe(0);
    expect(cancel.stderr).toContain('no execution with id "no-such-run"');
  });
});
