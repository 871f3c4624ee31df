// A real master (embedded store) killed with SIGKILL right after claiming a slot: after the
// restart the slot is not fired again (it is closed failed_to_start) and later slots fire. The
// scheduler's clock runs 30 times faster (scheduler.test_clock_rate: a minute every 2 s), so
// no test waits through real minutes; the jobs are added and read through the CLI. Then, on the
// restarted master, jobs of saved flows (the real flows plugin): an active flow's slot starts a run of
// its current version, an inactive flow's slot is closed failed_to_start with the flows' reason.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { until } from './cluster-helpers.js';
import { fetchAs, runRunner, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
afterAll(() => stopAll(children));

const dataDir = tempDataDir('runner-sched-kill-');
const env = { RUNNER_DATA_DIR: dataDir };
const epoch = Date.now();

function configure(hold: string) {
  writeFileSync(
    join(dataDir, 'config.yaml'),
    `scheduler:\n  missed_after: 10m\n  test_clock_rate: 30\n  test_clock_epoch: ${epoch}\n  test_hold_after_claim: ${hold}\n`,
  );
}

/** The running master's REST base (`http://127.0.0.1:<port>/api/v1`), set by startMaster. */
let base = '';

async function startMaster() {
  const child = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], { env });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 90_000);
  base = `http://127.0.0.1:${address!.split(':')[1]}/api/v1`;
  return child;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetchAs(dataDir)(`${base}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

interface Slot {
  slot_at: string;
  outcome: string;
  run_id: string | null;
  detail: string | null;
}

async function history(job = 'tick'): Promise<Slot[]> {
  const out = await runRunner(['scheduler', 'history', job, '--limit', '100', '-o', 'json'], { env });
  expect(out.code, out.stderr).toBe(0);
  return (JSON.parse(out.stdout) as { slots: Slot[] }).slots;
}

it('does not fire a slot again after a SIGKILL right after its claim', async () => {
  mkdirSync(join(dataDir, 'workflows'), { recursive: true });
  writeFileSync(
    join(dataDir, 'workflows', 'tick.yaml'),
    'version: "1.0"\ntasks:\n  - name: t\n    exec: { script: "return true" }\n',
  );
  configure('1h');
  const first = await startMaster();
  const added = await runRunner(
    ['scheduler', 'add', 'tick', '--workflow', 'tick.yaml', '--schedule', '* * * * *', '--overlap', 'allow'],
    { env },
  );
  expect(added.code, added.stderr).toBe(0);
  expect(added.stdout).toMatch(/^job tick added; next run \w{3}, /);

  const [, held] = await waitForOutput(first, /scheduler: claimed tick (\S+); holding/, 60_000);
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  configure('0s');
  await startMaster();
  const slots = await until(
    'a started slot after the held one',
    () => history(),
    (list) => list.some((s) => s.outcome === 'started' && s.slot_at > held!),
    60_000,
  );
  const heldSlot = slots.filter((s) => s.slot_at === held);
  expect(heldSlot).toHaveLength(1);
  expect(heldSlot[0]).toMatchObject({ outcome: 'failed_to_start', run_id: null });
  expect(heldSlot[0]!.detail).toMatch(/stopped after claiming the slot, before its run was recorded; not fired again/);

  // Every run of the job is the run of one started slot: none for the held slot, none twice.
  const runs = await runRunner(['executions', 'list', '--user', 'schedule:tick', '-o', 'json'], { env });
  const ids = (JSON.parse(runs.stdout) as { executions: { id: string }[] }).executions.map((r) => r.id);
  const started = (await history()).flatMap((s) => (s.run_id === null ? [] : [s.run_id]));
  expect(ids.length).toBeGreaterThan(0);
  expect(ids.filter((id) => !started.includes(id))).toEqual([]);
  expect(new Set(started).size).toBe(started.length);
});

// On the restarted master, whose clock still runs 30 times faster.
it("fires a job of a saved flow as a run of the flow's current version; an inactive flow's slot fails to start", async () => {
  const yaml = (word: string) =>
    `version: "1.0"\ntasks:\n  - name: t\n    exec: { script: 'log.info("${word}") return true' }\n`;
  expect((await api('POST', '/flows', { name: 'beat', yaml: yaml('one') })).status).toBe(201);
  // Version 2 is current when the job fires: the run is of it.
  expect((await api('PUT', '/flows/beat', { yaml: yaml('two'), base_version: 1 })).status).toBe(200);
  expect((await api('POST', '/flows', { name: 'asleep', yaml: yaml('never'), active: false })).status).toBe(201);
  for (const [name, flow] of [
    ['beat-job', 'beat'],
    ['asleep-job', 'asleep'],
  ]) {
    const added = await api('POST', '/scheduler/jobs', { name, flow, schedule: '* * * * *', overlap: 'allow' });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
  }

  const beat = await until(
    'a started slot of beat-job',
    () => history('beat-job'),
    (list) => list.some((s) => s.outcome === 'started' && s.run_id !== null),
  );
  const runId = beat.find((s) => s.outcome === 'started')!.run_id!;
  const run = await api<Record<string, unknown>>('GET', `/executions/${runId}`);
  expect(run.body).toMatchObject({ workflow_name: 'beat', trigger: 'scheduler', user: 'schedule:beat-job' });
  const inputs = await api<{ inputs: { source?: string } }>('GET', `/executions/${runId}/inputs`);
  expect(inputs.body.inputs.source).toBe('flow beat v2');
  // Counted in the flow's statistics once it ended.
  await until(
    "beat's statistics counting a run",
    async () => (await api<{ stats: { executions: number } }>('GET', '/flows/beat')).body.stats.executions,
    (count) => count > 0,
  );

  const asleep = await until(
    'a closed slot of asleep-job',
    () => history('asleep-job'),
    (list) => list.some((s) => s.outcome === 'failed_to_start'),
  );
  expect(asleep.filter((s) => s.outcome !== 'failed_to_start')).toEqual([]);
  expect(asleep[0]).toMatchObject({ run_id: null });
  expect(asleep[0]!.detail).toContain(
    'flow "asleep" is inactive: schedules and hooks start only active flows (runner flow activate asleep)',
  );
  const none = await api<{ total: number }>('GET', '/executions?workflow=asleep&limit=0');
  expect(none.body.total).toBe(0);
});
