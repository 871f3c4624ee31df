// Two masters on one PostgreSQL and a job every minute: each slot fires exactly once (one claim
// row, one run), and after `kill -9` of the master that fired the last slot the next slot fires on
// the other. The masters' scheduler clocks run 30 times faster from one shared epoch
// (scheduler.test_clock_rate and test_clock_epoch: a minute every 2 s, both masters agreeing on
// it), so the slots come every 2 s instead of every minute; the claims are the same code.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import { callMaster, startClusterMaster, until, type ClusterMaster } from './cluster-helpers.js';
import { stopAll, tempDataDir, type spawnRunner } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
let db: TestDatabase | undefined;
const masters: ClusterMaster[] = [];
const epoch = Date.now();

interface Slot {
  slot_at: string;
  outcome: string;
  run_id: string | null;
  master: string;
}

function dataDirWithWorkflow(name: string): string {
  const dir = tempDataDir(`sched-${name}-`);
  mkdirSync(join(dir, 'workflows'));
  writeFileSync(
    join(dir, 'workflows', 'tick.yaml'),
    'version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "return true" }\n',
  );
  writeFileSync(
    join(dir, 'config.yaml'),
    `scheduler:\n  missed_after: 10m\n  test_clock_rate: 30\n  test_clock_epoch: ${epoch}\n`,
  );
  return dir;
}

const pg = postgresReachable();

beforeAll(async () => {
  if (!pg) return;
  db = createTestDatabase('scheduler_cluster');
  masters.push(
    ...(await Promise.all(
      ['a', 'b'].map((name) => startClusterMaster(name, db!.url, { children, dataDir: dataDirWithWorkflow(name) })),
    )),
  );
}, 120_000);

afterAll(() => {
  stopAll(children);
  db?.drop();
});

const history = async (master: ClusterMaster) =>
  (await callMaster<{ slots: Slot[] }>(master, 'GET', '/scheduler/jobs/every-minute/history?limit=500')).body.slots;

/** The master (of those started) whose id names this process. */
const byId = (id: string) => masters.find((m) => id.includes(`-${m.child.pid}-`));

describe.runIf(pg)('the scheduler on two masters sharing PostgreSQL', () => {
  it('fires each slot once, and on the survivor after kill -9 of the master that fired the last', async () => {
    const [a, b] = masters as [ClusterMaster, ClusterMaster];
    const added = await callMaster(a, 'POST', '/scheduler/jobs', {
      name: 'every-minute',
      workflow: 'tick.yaml',
      schedule: '* * * * *',
      timezone: 'UTC',
      overlap: 'allow',
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);

    const firstThree = await until(
      'three started slots',
      () => history(b),
      (s) => s.filter((x) => x.outcome === 'started').length >= 3,
      60_000,
    );
    const started = firstThree.filter((s) => s.outcome === 'started').reverse();
    // Consecutive minutes, each once, each with its own run, every one on a live master of ours.
    const minutes = started.map((s) => Date.parse(s.slot_at) / 60_000);
    expect(minutes.slice(1).map((m, i) => m - minutes[i]!)).toEqual(minutes.slice(1).map(() => 1));
    expect(new Set(started.map((s) => s.run_id)).size).toBe(started.length);
    expect(started.every((s) => byId(s.master))).toBe(true);
    const runs = await callMaster<{ executions: { id: string }[] }>(
      a,
      'GET',
      '/executions?user=schedule:every-minute&limit=500',
    );
    const runIds = runs.body.executions.map((r) => r.id);
    const allStarted = (await history(a)).flatMap((s) => (s.run_id ? [s.run_id] : []));
    expect(runIds.filter((id) => !allStarted.includes(id))).toEqual([]);
    expect(new Set(allStarted).size).toBe(allStarted.length);

    const last = (await history(a)).find((s) => s.outcome === 'started')!;
    const victim = byId(last.master)!;
    const survivor = victim === a ? b : a;
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => victim.child.once('exit', resolve));

    const after = await until(
      'a slot after the kill',
      () => history(survivor),
      (s) => s.some((x) => x.outcome === 'started' && x.slot_at > last.slot_at),
      60_000,
    );
    const next = after.filter((s) => s.slot_at > last.slot_at && s.outcome === 'started').at(-1)!;
    expect(byId(next.master)).toBe(survivor);
    const slotTimes = after.map((s) => s.slot_at);
    expect(new Set(slotTimes).size).toBe(slotTimes.length);
  });
});
