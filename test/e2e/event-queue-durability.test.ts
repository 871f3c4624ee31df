import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import { callMaster, startClusterMaster, type ClusterMaster } from './cluster-helpers.js';
import { stopAll, type spawnRunner } from './helpers.js';

/**
 * The event queue across masters and crashes, with real `runner server` processes on one
 * PostgreSQL: two masters run each event's hooks once; a master SIGKILLed while a hook runs loses
 * no event and runs no hook twice for one event after its restart (its leases expire, the events
 * are taken again, the hook it was running is marked interrupted, not run a second time).
 */

const children: ReturnType<typeof spawnRunner>[] = [];
let database: TestDatabase | undefined;
afterAll(() => {
  stopAll(children);
  database?.drop();
});

/** Lines the hooks appended (run as the executor's user, hence a directory anyone may write). */
function outputDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'runner-queue-out-'));
  chmodSync(dir, 0o777);
  return dir;
}
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** A hook on task.completed appending the event id to `file`. */
const appendingHook = (name: string, file: string) => ({
  name,
  event_type: 'task.completed',
  script: `local f = assert(io.open(${JSON.stringify(file)}, "a")) f:write(hook.event_id .. "\\n") f:close()`,
});

/** A workflow of `n` independent tasks, each completing at once. */
function tasks(n: number): string {
  let text = 'version: "1.0"\ntasks:\n';
  for (let i = 1; i <= n; i++) text += `  - name: t${i}\n    exec:\n      script: return true\n`;
  return text;
}

async function run(master: ClusterMaster, name: string, n: number): Promise<string> {
  const started = await callMaster<{ id: string }>(master, 'POST', '/workflows/run', {
    content: tasks(n),
    workflow_name: name,
  });
  expect(started.status).toBe(202);
  return started.body.id;
}

interface Listed {
  events: { id: string; status: string; data: { run_id: string }; last_error: string | null }[];
}

/** The run's task.completed events once none is pending or processing. */
async function settled(master: ClusterMaster, runId: string, count: number): Promise<Listed['events']> {
  let events: Listed['events'] = [];
  await expect
    .poll(
      async () => {
        const page = await callMaster<Listed>(master, 'GET', '/events?type=task.completed&limit=1000');
        events = page.body.events.filter((e) => e.data.run_id === runId);
        return events.length === count && events.every((e) => e.status === 'completed' || e.status === 'failed');
      },
      { timeout: 60_000, interval: 200 },
    )
    .toBe(true);
  return events;
}

describe.skipIf(!postgresReachable())('the event queue on PostgreSQL', () => {
  it("with two masters runs each event's hooks once; a master killed in a hook loses no event and runs none twice", async () => {
    database = createTestDatabase('event_queue');
    const out = outputDir();
    const file = join(out, 'ran.txt');
    // A short lease, so that the events the killed master held are taken again within seconds.
    const env = { RUNNER_EVENTS_LEASE_TIMEOUT: '3s', RUNNER_EVENTS_CONCURRENCY: '1' };
    const [a, b] = await Promise.all([
      startClusterMaster('a', database.url, { children, env }),
      startClusterMaster('b', database.url, { children, env }),
    ]);
    const hook = appendingHook('once', file);
    // Slow only for the run that is to be interrupted.
    hook.script += '\nif hook.payload.workflow_name == "crashing" then os.execute("sleep 2") end';
    expect((await callMaster(a, 'POST', '/hooks', hook)).status).toBe(201);
    // B learns of the hook through the cluster: wait until it lists it before its run emits events.
    await expect
      .poll(async () => (await callMaster<{ total: number }>(b, 'GET', '/hooks')).body.total, { timeout: 30_000 })
      .toBe(1);
    const [onA, onB] = await Promise.all([run(a, 'from-a', 8), run(b, 'from-b', 8)]);
    const events = [...(await settled(a, onA, 8)), ...(await settled(b, onB, 8))];
    expect(events.every((e) => e.status === 'completed')).toBe(true);
    expect(lines(file).sort()).toEqual(events.map((e) => e.id).sort());
    expect((await callMaster<{ total: number }>(b, 'GET', '/hooks/once/history?limit=1')).body.total).toBe(16);

    // B leaves (its events are done); A is killed while the hook runs on the crashing run's first event.
    b.child.kill('SIGTERM');
    await new Promise((resolve) => b.child.once('exit', resolve));
    const before = lines(file).length;
    const runId = await run(a, 'crashing', 3);
    await expect.poll(() => lines(file).length, { timeout: 60_000, interval: 100 }).toBe(before + 1);
    a.child.kill('SIGKILL');
    await new Promise((resolve) => a.child.once('exit', resolve));

    const restarted = await startClusterMaster('a', database.url, { children, env, dataDir: a.dataDir });
    const crashing = await settled(restarted, runId, 3);
    const ran = lines(file);
    // Each event ran the hook at most once: the one running at the kill is not run again.
    expect(new Set(ran).size).toBe(ran.length);
    const interrupted = crashing.filter((e) => e.status === 'failed');
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0].last_error).toMatch(/^once: interrupted: the master running this hook stopped/);
    expect(ran.slice(before).sort()).toEqual(crashing.map((e) => e.id).sort());
  });
});
