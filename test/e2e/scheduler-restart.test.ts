// A real master (embedded store) killed with SIGKILL right after claiming a slot: after the
// restart the slot is not fired again (it is closed failed_to_start) and later slots fire. The
// scheduler's clock runs 30 times faster (scheduler.test_clock_rate: a minute every 2 s), so
// no test waits through real minutes; the jobs are added and read through the CLI.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { until } from './cluster-helpers.js';
import { runRunner, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

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

async function startMaster() {
  const child = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], { env });
  children.push(child);
  await waitForOutput(child, /REST API listening on 127\.0\.0\.1:\d+/, 90_000);
  return child;
}

interface Slot {
  slot_at: string;
  outcome: string;
  run_id: string | null;
  detail: string | null;
}

async function history(): Promise<Slot[]> {
  const out = await runRunner(['scheduler', 'history', 'tick', '--limit', '100', '-o', 'json'], { env });
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
    history,
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
