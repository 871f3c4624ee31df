// The failover proof of issue 17 ("Done when"), lean: three masters on one PostgreSQL and three
// agents (each given every master, each starting on a different one); runs submitted round-robin
// to all three masters, each delegated to an agent that may sit on another master; `kill -9` of
// one master while runs go on. Every run acknowledged before the kill is found afterwards, the
// dead master's running run ends interrupted, its agent is back on a survivor, the survivors
// answer no 5xx, a WebSocket client on a survivor saw every run the survivors took, and the dead
// master restarted rejoins with nothing duplicated. Times are printed, not asserted. Before the
// kill, a terminal opened through one master reaches an agent connected to another.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import { callMaster, startClusterMaster, until as waitUntil, type ClusterMaster } from './cluster-helpers.js';
import { FAST_AGENTS, localAuth, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
const JOIN_TOKEN = randomBytes(24).toString('hex');
let database: TestDatabase;
type Master = ClusterMaster;
const startMaster = (name: string, url: string, dataDir?: string): Promise<Master> =>
  startClusterMaster(name, url, { children, dataDir, env: { RUNNER_JOIN_TOKEN: JOIN_TOKEN } });
const call = callMaster;
/** Three masters and three agents on a busy machine: a longer ceiling than the other files'. */
const until = <T>(what: string, read: () => Promise<T>, check: (value: T) => boolean, ceilingMs = 90_000) =>
  waitUntil(what, read, check, ceilingMs);

const delegated = (agent: string) => `version: "1.0"
tasks:
  - name: there
    delegate_to: ${agent}
    exec:
      script: |
        return true, "ran on ${agent}"
`;

const LONG = `version: "1.0"
tasks:
  - name: wait
    exec:
      script: |
        exec.run("sleep 120")
        return true
`;

describe.skipIf(!postgresReachable())('three masters, three agents, one master killed', () => {
  let masters: Master[];
  const agents: ReturnType<typeof spawnRunner>[] = [];

  beforeAll(async () => {
    database = createTestDatabase('several_masters_failover');
    masters = await Promise.all(['m1', 'm2', 'm3'].map((name) => startMaster(name, database.url)));
    for (let i = 0; i < 3; i++) {
      // Each agent lists every master, starting with a different one.
      const list = [0, 1, 2].map((k) => (masters[(i + k) % 3] as Master).grpc).join(',');
      const agent = spawnRunner(['agent', 'start', `ag${i + 1}`, '--master', list], {
        env: { RUNNER_DATA_DIR: tempDataDir(`ha3-ag${i + 1}-`), RUNNER_JOIN_TOKEN: JOIN_TOKEN, ...FAST_AGENTS },
      });
      children.push(agent);
      agents.push(agent);
      await waitForOutput(agent, /registered with master/);
    }
  }, 180_000);

  afterAll(() => {
    stopAll(children);
    database?.drop();
  });

  // A ceiling above its waits' (90 s, then 30 s each), so that a slow step is named by its wait.
  it('opens a terminal through one master on an agent connected to another: types, reads, resizes, moves files', async () => {
    const [m1, m2] = masters as [Master, Master, Master];
    // ag1 is connected to m1 (the first of its list); m2 learns it from m1's announcement.
    expect(m1.child.output.stdout + m1.child.output.stderr).toMatch(/agent ag1 connected from/);
    // Connected: online, or warning on a machine whose CPU other work keeps busy (ag1 reports it).
    await until(
      'm2 sees ag1 connected',
      async () => (await call<{ status: string }>(m2, 'GET', '/agents/ag1')).body,
      (agent) => agent?.status === 'online' || agent?.status === 'warning',
    );
    const opened = await call<{ id: string }>(m2, 'POST', '/terminal/sessions', { target: 'ag1', rows: 24, cols: 80 });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const id = opened.body.id;
    const ws = new WebSocket(`${m2.base.replace('http', 'ws')}/terminal/sessions/${id}/socket`, {
      headers: localAuth(m2.dataDir),
    });
    let text = '';
    const messages: { type: string; code?: number }[] = [];
    ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary) text += data.toString();
      else messages.push(JSON.parse(data.toString()));
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const shows = (what: string) =>
      until(
        what,
        async () => text,
        (seen) => seen.includes(what),
        30_000,
      );
    const type = (keys: string) => ws.send(Buffer.from(keys), { binary: true });
    type('echo hel""lo-$((6*7))\r');
    await shows('hello-42');
    ws.send(JSON.stringify({ type: 'resize', rows: 40, cols: 132 }));
    type('stty size\r');
    await shows('40 132');

    const data = randomBytes(100_000);
    const path = `/tmp/runner-relayed-${randomBytes(4).toString('hex')}`;
    const up = await call(m2, 'POST', `/terminal/sessions/${id}/upload`, {
      path,
      content_base64: data.toString('base64'),
    });
    expect(up.body).toEqual({ path, bytes: data.length });
    const down = await call<{ content_base64: string }>(
      m2,
      'GET',
      `/terminal/sessions/${id}/download?path=${encodeURIComponent(path)}`,
    );
    expect(Buffer.from(down.body.content_base64, 'base64').equals(data)).toBe(true);
    type(`rm ${path}; exit 4\r`);
    await until(
      'the end of the shell',
      async () => messages,
      (seen) => seen.some((m) => m.type === 'exit'),
      30_000,
    );
    expect(messages.find((m) => m.type === 'exit')?.code).toBe(4);
    ws.close();
  }, 240_000);

  it("keeps every acknowledged run, ends the dead master's run interrupted, moves its agent, answers no 5xx; the master rejoins", async () => {
    const [m1, m2, m3] = masters as [Master, Master, Master];
    const socket = new WebSocket(`${m3.base.replace('http', 'ws')}/ws`, { headers: localAuth(m3.dataDir) });
    const startedOnM3Socket = new Set<string>();
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; data: { run_id?: string } };
      if (message.type === 'workflow.started' && message.data.run_id) startedOnM3Socket.add(message.data.run_id);
    });
    await new Promise((resolve) => socket.once('open', resolve));

    const long = await call(m1, 'POST', '/workflows/run', { content: LONG, workflow_name: 'long-on-m1' });
    expect(long.status).toBe(202);
    const longId = (long.body as { id: string }).id;

    const acknowledged: { id: string; master: string }[] = [];
    const serverErrors: string[] = [];
    let killedAt = 0;
    let n = 0;
    const submitOne = async () => {
      const live = killedAt === 0 ? masters : [m2, m3];
      const master = live[n % live.length] as Master;
      const agent = `ag${(n % 3) + 1}`;
      n++;
      try {
        const answer = await call(master, 'POST', '/workflows/run', {
          content: delegated(agent),
          workflow_name: `rr-${agent}`,
        });
        if (answer.status >= 500) serverErrors.push(`${master.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
        else if (answer.status === 202)
          acknowledged.push({ id: (answer.body as { id: string }).id, master: master.name });
      } catch (error) {
        // Only the killed master may refuse connections.
        if (master !== m1) serverErrors.push(`${master.name}: ${(error as Error).message}`);
      }
    };
    const submitFor = async (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        await submitOne();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await submitFor(3_000);
    const beforeKill = acknowledged.length;
    // ag1 started on m1: it is the agent that must move.
    const ag1 = agents[0] as ReturnType<typeof spawnRunner>;
    const ag1From = ag1.output.stdout.length + ag1.output.stderr.length;
    m1.child.kill('SIGKILL');
    killedAt = Date.now();
    const agentBack = waitForOutput(ag1, /registered with master/, { from: ag1From, timeoutMs: 90_000 }).then(
      () => (Date.now() - killedAt) / 1000,
    );
    await submitFor(5_000);

    const interrupted = await until(
      'the long run of m1',
      async () => (await call(m2, 'GET', `/executions/${longId}`)).body as { status: string; error?: string },
      (run) => run.status !== 'running',
    );
    const interruptedAfter = (Date.now() - killedAt) / 1000;
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.error).toContain('died before the run ended');
    const agentBackAfter = await agentBack;

    // A run on a survivor delegated to the agent that moved completes.
    const moved = await call(m3, 'POST', '/workflows/run', { content: delegated('ag1'), workflow_name: 'after-move' });
    expect(moved.status).toBe(202);
    const movedRun = await until(
      'the run delegated to the agent that moved',
      async () =>
        (await call(m3, 'GET', `/executions/${(moved.body as { id: string }).id}`)).body as { status: string },
      (run) => run.status !== 'running',
    );
    expect(movedRun.status).toBe('succeeded');

    // Every acknowledged run is there, and ended (the dead master's may have ended interrupted).
    for (const { id } of acknowledged) {
      const found = await until(
        `run ${id}`,
        () => call(m2, 'GET', `/executions/${id}`),
        (answer) => answer.status === 200 && (answer.body as { status: string }).status !== 'running',
      );
      expect(found.status).toBe(200);
    }
    const bySurvivors = acknowledged.filter((run) => run.master !== 'm1').map((run) => run.id);
    await until(
      "the survivors' runs on the WebSocket of m3",
      async () => bySurvivors.filter((id) => !startedOnM3Socket.has(id)),
      (missing) => missing.length === 0,
      30_000,
    );
    expect(serverErrors).toEqual([]);
    console.log(
      `runs acknowledged: ${acknowledged.length} (${beforeKill} before the kill); m1's running run interrupted ${interruptedAfter.toFixed(1)} s after kill -9; ag1 back on a survivor after ${agentBackAfter.toFixed(1)} s; 5xx from survivors: ${serverErrors.length}`,
    );

    // m1 again: it rejoins; nothing ended twice.
    const again = await startMaster('m1', database.url, m1.dataDir);
    const live = await until(
      'three live masters',
      async () => ((await call(again, 'GET', '/cluster/masters')).body as { masters: unknown[] }).masters,
      (list) => list.length === 3,
    );
    expect(live).toHaveLength(3);
    expect(database.psql('SELECT count(*) FROM cluster_masters').trim()).toBe('3');
    expect(database.psql(`SELECT count(*) FROM runs WHERE id = '${longId}'`).trim()).toBe('1');
    expect(((await call(again, 'GET', `/executions/${longId}`)).body as { status: string }).status).toBe('interrupted');
    socket.close();
  }, 300_000);
});
