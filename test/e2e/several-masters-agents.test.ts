// Agents with several masters on one PostgreSQL (issue 17, item 4): an agent given both masters'
// addresses connects to the first; a run on the other master delegates to it (the task runs
// there, its result and log come back), exec and the agent's page answer from either master;
// after `kill -9` of its master the agent is back on the survivor and takes tasks there.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import { callMaster, startClusterMaster, until, type ClusterMaster } from './cluster-helpers.js';
import { FAST_AGENTS, localAuth, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

interface Run {
  id: string;
  status: string;
  tasks: { name: string; agent: string; status: string; message?: string; log: { message: string }[] }[];
}

const children: ReturnType<typeof spawnRunner>[] = [];
// One join token for every master: an agent may enrol through any of them.
const JOIN_TOKEN = randomBytes(24).toString('hex');
let database: TestDatabase;
type Master = ClusterMaster;
const startMaster = (url: string): Promise<Master> =>
  startClusterMaster('agents', url, { children, env: { RUNNER_JOIN_TOKEN: JOIN_TOKEN } });
const api = callMaster;

/** A run on `master` of one task delegated to `agent`, to its end. */
async function delegate(master: Master, agent: string, marker: string): Promise<Run> {
  const content = `version: "1.0"
tasks:
  - name: there
    delegate_to: ${agent}
    exec:
      script: |
        log.info("${marker} from " .. exec.run("hostname").stdout)
        return true, "${marker} done", { pid = exec.run("echo -n $PPID").stdout }
`;
  const started = await api<{ id: string }>(master, 'POST', '/workflows/run', { content, workflow_name: marker });
  expect(started.status).toBe(202);
  return until(
    `run ${marker}`,
    async () => (await api<Run>(master, 'GET', `/executions/${started.body.id}`)).body,
    (run) => run.status !== 'running',
  );
}

describe.skipIf(!postgresReachable())('agents with several masters on one PostgreSQL', () => {
  let a: Master;
  let b: Master;
  let agent: ReturnType<typeof spawnRunner>;

  beforeAll(async () => {
    database = createTestDatabase('several_masters_agents');
    [a, b] = await Promise.all([startMaster(database.url), startMaster(database.url)]);
    agent = spawnRunner(['agent', 'start', 'ha1', '--master', `${a.grpc},${b.grpc}`], {
      env: { RUNNER_DATA_DIR: tempDataDir('ha-agents-ha1-'), RUNNER_JOIN_TOKEN: JOIN_TOKEN, ...FAST_AGENTS },
    });
    children.push(agent);
    await waitForOutput(agent, new RegExp(`registered with master ${a.grpc.replace(/\./g, '\\.')}`));
  }, 120_000);

  afterAll(() => {
    stopAll(children);
    database?.drop();
  });

  it('runs a task delegated on one master on an agent connected to the other, and answers for it everywhere', async () => {
    // B learns of the agent (announced by A).
    await until(
      'ha1 connected, seen from B',
      async () => (await api<{ status: string }>(b, 'GET', '/agents/ha1')).body.status,
      (status) => status !== undefined && status !== 'offline',
    );
    const run = await delegate(b, 'ha1', 'cross');
    expect(run.status).toBe('succeeded');
    expect(run.tasks[0]).toMatchObject({ agent: 'ha1', status: 'succeeded', message: 'cross done' });
    expect(run.tasks[0]?.log.some((line) => line.message.startsWith('cross from '))).toBe(true);

    const exec = await api<{ stdout: string; exit_code: number }>(b, 'POST', '/agents/ha1/exec', {
      command: 'echo -n through-a',
    });
    expect(exec.status).toBe(200);
    expect(exec.body).toMatchObject({ stdout: 'through-a', exit_code: 0 });

    // The agent's own log, streamed from B while the agent is on A.
    const controller = new AbortController();
    const stream = await fetch(`${b.base}/agents/ha1/logs/stream`, {
      headers: localAuth(b.dataDir),
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    let text = '';
    for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString('utf8');
      if (/^data: .*registered with master/m.test(text)) break;
    }
    controller.abort();
    expect(text).toMatch(/^data: .*registered with master/m);
  }, 120_000);

  it('goes to the surviving master when its master is killed, and takes tasks there', async () => {
    const from = agent.output.stdout.length + agent.output.stderr.length;
    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    await waitForOutput(agent, new RegExp(`registered with master ${b.grpc.replace(/\./g, '\\.')}`), { from });
    console.log(`the agent was back on the survivor ${((Date.now() - killedAt) / 1000).toFixed(1)} s after kill -9`);
    await until(
      'ha1 connected to B',
      async () => (await api<{ status: string }>(b, 'GET', '/agents/ha1')).body.status,
      (status) => status !== undefined && status !== 'offline',
    );
    const run = await delegate(b, 'ha1', 'after');
    expect(run.status).toBe('succeeded');
    expect(run.tasks[0]).toMatchObject({ agent: 'ha1', message: 'after done' });
  }, 120_000);
});
