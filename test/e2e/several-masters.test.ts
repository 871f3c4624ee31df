// Several masters on one PostgreSQL (issue 17, item 4): two real `runner server` processes on one
// database. A WebSocket client on B sees A's runs and follows A's run log; a run held by B is
// cancelled through A; after `kill -9` of A, B ends A's running run `interrupted` naming A and
// leaves its own run alone; A restarted rejoins and nothing is ended or listed twice.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import { FAST_AGENTS, localAuth, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

interface Master {
  name: string;
  dataDir: string;
  base: string;
  child: ReturnType<typeof spawnRunner>;
}

interface Run {
  id: string;
  status: string;
  error?: string;
}

/** A task that writes a log line every 200 ms for about a minute (its command keeps it running). */
const SLOW = `version: "1.0"
tasks:
  - name: tick
    exec:
      script: |
        for i = 1, 300 do
          log.info("tick " .. i)
          exec.run("sleep 0.2")
        end
        return true
`;

const children: ReturnType<typeof spawnRunner>[] = [];
// One session key for every master: a session from one is good on all (behind a load balancer).
const JWT_SECRET = randomBytes(32).toString('hex');
let database: TestDatabase;

async function startMaster(name: string, url: string, dataDir = tempDataDir(`ha-${name}-`)): Promise<Master> {
  writeFileSync(join(dataDir, 'config.yaml'), `auth:\n  jwt:\n    secret: ${JWT_SECRET}\n`, { mode: 0o600 });
  const child = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
    env: { RUNNER_DATA_DIR: dataDir, RUNNER_STORE_URL: url, ...FAST_AGENTS },
  });
  children.push(child);
  const [, http] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 90_000);
  return { name, dataDir, base: `http://${http}/api/v1`, child };
}

async function api<T>(
  master: Master,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${master.base}${path}`, {
    method,
    headers: { ...localAuth(master.dataDir), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function submit(master: Master, name: string): Promise<string> {
  const started = await api<{ id: string }>(master, 'POST', '/workflows/run', { content: SLOW, workflow_name: name });
  expect(started.status).toBe(202);
  return started.body.id;
}

async function runOn(master: Master, id: string): Promise<Run> {
  return (await api<Run>(master, 'GET', `/executions/${id}`)).body;
}

/** Polls until `check` holds, every 250 ms, within a ceiling far above the need. */
async function until<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ceilingMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ceilingMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Reads a run's log stream (SSE) on `master` until `lines` lines matching `pattern` came; resolves with those. */
async function followLog(master: Master, id: string, pattern: RegExp, lines: number): Promise<string[]> {
  const controller = new AbortController();
  const response = await fetch(`${master.base}/executions/${id}/log/stream`, {
    headers: localAuth(master.dataDir),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const seen: string[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    for (const [, data] of text.matchAll(/event: lines\ndata: (.*)\n\n/g))
      for (const line of JSON.parse(data as string) as { message: string }[])
        if (pattern.test(line.message)) seen.push(line.message);
    text = text.slice(text.lastIndexOf('\n\n') + 2);
    if (seen.length >= lines) break;
  }
  controller.abort();
  return seen;
}

describe.skipIf(!postgresReachable())('several masters on one PostgreSQL', () => {
  let a: Master;
  let b: Master;

  beforeAll(async () => {
    database = createTestDatabase('several_masters');
    [a, b] = await Promise.all([startMaster('a', database.url), startMaster('b', database.url)]);
  }, 120_000);

  afterAll(() => {
    stopAll(children);
    database?.drop();
  });

  it('serves every master the others runs: WebSocket messages, the list, the log stream, cancel', async () => {
    const socket = new WebSocket(`${b.base.replace('http', 'ws')}/ws`, { headers: localAuth(b.dataDir) });
    const seenOnB: { type: string; data: { run_id?: string } }[] = [];
    socket.on('message', (raw) => seenOnB.push(JSON.parse(String(raw)) as (typeof seenOnB)[number]));
    await new Promise((resolve) => socket.once('open', resolve));

    const onA = await submit(a, 'on-a');
    await until(
      'workflow.started of the run on A, on B',
      async () => seenOnB.filter((m) => m.data.run_id === onA).map((m) => m.type),
      (types) => types.includes('workflow.started') && types.includes('task.started'),
    );
    // B's executions list (its first page is kept) shows A's run.
    const listed = await until(
      "B's list",
      async () => (await api<{ executions: Run[] }>(b, 'GET', '/executions')).body.executions.map((r) => r.id),
      (ids) => ids.includes(onA),
    );
    expect(listed).toContain(onA);
    // A's log, followed on B: lines as A's task writes them.
    const lines = await followLog(b, onA, /^tick \d+$/, 3);
    const numbers = lines.slice(0, 3).map((line) => Number(line.split(' ')[1]));
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));

    // A run B executes, cancelled through A.
    const onB = await submit(b, 'on-b-cancelled');
    await until(
      'run on B started',
      () => runOn(b, onB),
      (run) => run.status === 'running',
    );
    const cancelled = await api<Run>(a, 'POST', `/executions/${onB}/cancel`);
    expect(cancelled.status).toBe(200);
    const ended = await until(
      'cancelled run',
      () => runOn(a, onB),
      (run) => run.status !== 'running',
    );
    expect(ended.status).toBe('cancelled');
    await until(
      'workflow end of the cancelled run, on B',
      async () => seenOnB.filter((m) => m.data.run_id === onB).map((m) => m.type),
      (types) => types.some((t) => t === 'workflow.failed' || t === 'workflow.completed'),
    );
    socket.close();
    await api(a, 'POST', `/executions/${onA}/cancel`);
  }, 120_000);

  it('keeps accounts, sessions and agent groups the same on every master: a user added on one logs in on the other, a logout holds everywhere', async () => {
    const password = `pw-${randomBytes(12).toString('hex')}`;
    expect((await api(a, 'POST', '/users', { name: 'dana', role: 'viewer', password })).status).toBe(201);
    const login = await until(
      'login on B',
      () =>
        fetch(`${b.base}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'dana', password }),
        }),
      (response) => response.status !== 401,
      20_000,
    );
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const me = (master: Master) =>
      fetch(`${master.base}/auth/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await me(a)).toBe(200);
    expect(
      (await fetch(`${a.base}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status,
    ).toBeLessThan(300);
    expect(
      await until(
        'the session on B after logout on A',
        () => me(b),
        (status) => status === 401,
        20_000,
      ),
    ).toBe(401);

    // An agent group made on B is there on A, members and all.
    expect((await api(b, 'POST', '/agent-groups', { name: 'web', members: ['w1', 'w2'] })).status).toBe(201);
    const group = await until(
      'the group on A',
      () => api<{ members?: string[] }>(a, 'GET', '/agent-groups/web'),
      (answer) => answer.status === 200,
      20_000,
    );
    expect(group.body.members).toEqual(['w1', 'w2']);
  }, 60_000);

  it("ends a killed master's running run interrupted on the survivor, leaves the survivor's alone; the restarted master rejoins", async () => {
    const socket = new WebSocket(`${b.base.replace('http', 'ws')}/ws`, { headers: localAuth(b.dataDir) });
    const endsOnB: string[] = [];
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; data: { run_id?: string; status?: string } };
      if (message.type === 'workflow.failed' && message.data.status === 'interrupted')
        endsOnB.push(message.data.run_id as string);
    });
    await new Promise((resolve) => socket.once('open', resolve));
    const onA = await submit(a, 'held-by-a');
    const onB = await submit(b, 'held-by-b');
    await until(
      'both running',
      async () => [await runOn(b, onA), await runOn(b, onB)],
      (runs) => runs.every((run) => run.status === 'running'),
    );
    const masters = await api<{ masters: { id: string }[] }>(b, 'GET', '/cluster/masters');
    expect(masters.body.masters).toHaveLength(2);

    const ownerOfA = (await api<{ self: string }>(a, 'GET', '/cluster/masters')).body.self;
    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    // Cancel through B of the run the dead master held: a clear 503 naming it, not a hang.
    const cancelThroughB = api<{ error: { code: string; message: string } }>(b, 'POST', `/executions/${onA}/cancel`);
    const interrupted = await until(
      'run of the killed master',
      () => runOn(b, onA),
      (run) => run.status !== 'running',
    );
    console.log(
      `the killed master's run ended interrupted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after kill -9`,
    );
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.error).toMatch(/^interrupted: master \S+ at 127\.0\.0\.1:\d+ died before the run ended/);
    expect((await runOn(b, onB)).status).toBe('running');
    const refused = await cancelThroughB;
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({
      code: 'master_unavailable',
      message: expect.stringContaining(`master ${ownerOfA} `),
    });
    await until(
      'the interruption announced on B',
      async () => endsOnB,
      (ids) => ids.includes(onA),
    );

    // A again, on its data directory: a new master id, the old one's row gone, nothing ended twice.
    a = await startMaster('a', database.url, a.dataDir);
    const rejoined = await until(
      'masters after the restart',
      async () => (await api<{ masters: { id: string }[] }>(a, 'GET', '/cluster/masters')).body.masters,
      (list) => list.length === 2,
    );
    expect(new Set(rejoined.map((m) => m.id)).size).toBe(2);
    expect(database.psql('SELECT count(*) FROM cluster_masters').trim()).toBe('2');
    expect((await runOn(a, onA)).status).toBe('interrupted');
    expect((await runOn(a, onB)).status).toBe('running');
    const all = await api<{ executions: Run[]; total: number }>(a, 'GET', '/executions?limit=100');
    expect(all.body.executions.filter((r) => r.id === onA)).toHaveLength(1);
    expect(endsOnB.filter((id) => id === onA)).toHaveLength(1);
    socket.close();
  }, 180_000);
});
