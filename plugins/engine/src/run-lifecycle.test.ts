import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord } from '@runner/plugin-sdk';
import { openStore, type OpenedStore } from '@runner/plugin-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEASE_TTL_MS, recordProcessGroups, RunLeases } from './run-lifecycle.js';
import { RunStore } from './run-store.js';

const silent = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silent;
  },
} as never;

const DEAD = 'pid 1 on elsewhere (started 2026-01-01T00:00:00.000Z)';
const ME = 'pid 2 on here (started 2026-01-02T00:00:00.000Z)';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

function run(id: string, startedAt = T0): Omit<RunRecord, 'tasks'> {
  return {
    id,
    workflowName: `wf-${id}`,
    status: 'running',
    dryRun: false,
    startedAt: new Date(startedAt).toISOString(),
    duration: 0,
    counts: {},
  };
}

/** A detached `sleep` leading its own process group, as exec.run starts them. */
function detachedSleep(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  child.unref();
  return child as ChildProcess & { pid: number };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A killed child stays a zombie until reaped; it is not running.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('reconciling runs a dead process left running', () => {
  let dir: string;
  let store: OpenedStore;
  let runs: RunStore;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runner-run-lifecycle-'));
    store = await openStore(dir, silent);
    runs = new RunStore(store);
    await runs.migrate();
  });

  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends them interrupted with the reason and their task counts, kills their recorded groups, and spares its own', async () => {
    const dead = new RunLeases(store, DEAD, silent);
    runs.useLeases(dead);
    await runs.insertRun(run('a'));
    runs.queueTask('a', 0, {
      name: 'first',
      task: 'first',
      agent: 'localhost',
      status: 'succeeded',
      attempts: 1,
      duration: 1,
      log: [],
      logTruncated: false,
    });
    await runs.flush();
    // The lease was last renewed 30 s after the start: the run was alive then.
    await dead.renew(T0 + 30_000);
    const orphan = detachedSleep();
    children.push(orphan);
    const recordGroup = recordProcessGroups(store, DEAD, silent);
    recordGroup({ runId: 'a', task: 'second', pgid: orphan.pid });
    // Same pid as recorded, but the recorded start time is not this process's: a reused pid.
    const stranger = detachedSleep();
    children.push(stranger);
    recordGroup({ runId: 'a', task: 'third', pgid: stranger.pid });
    await store.run('UPDATE run_processes SET start_ticks = ? WHERE pgid = ?', ['1', stranger.pid]);

    runs.useLeases(new RunLeases(store, ME, silent));
    await runs.insertRun(run('mine'));
    expect((await runs.list({ status: 'running' })).total).toBe(2);

    const killed: [number, string][] = [];
    const now = new Date(T0 + 3_600_000);
    const interrupted = await runs.reconcile({
      owner: ME,
      logger: silent,
      exclusive: true,
      now,
      killGroup: (pgid, signal) => {
        killed.push([pgid, signal]);
        process.kill(-pgid, signal);
      },
    });

    expect(interrupted.map((r) => [r.id, r.killed])).toEqual([['a', [orphan.pid]]]);
    expect(killed).toEqual([[orphan.pid, 'SIGTERM']]);
    await new Promise((resolve) => orphan.once('exit', resolve));
    expect(alive(stranger.pid)).toBe(true);

    const record = await runs.get('a');
    expect(record).toMatchObject({
      status: 'interrupted',
      completedAt: new Date(T0 + 30_000 + 60_000 - LEASE_TTL_MS).toISOString(),
      duration: 30,
      counts: { succeeded: 1 },
    });
    expect(record?.error).toMatch(
      /^interrupted: pid 1 on elsewhere .* stopped before the run ended; found at the start of pid 2 on here/,
    );
    expect((await runs.get('mine'))?.status).toBe('running');
    expect((await runs.list({ status: 'running' })).total).toBe(1);
    expect((await runs.list({ status: 'interrupted' })).runs.map((r) => r.id)).toEqual(['a']);
    expect(await store.all('SELECT pgid FROM run_processes')).toEqual([]);

    // A second start finds nothing more to do.
    expect(await runs.reconcile({ owner: 'pid 3', logger: silent, exclusive: false, now })).toEqual([]);
  });

  it("ends a dead master's runs (and only its) whatever their lease says, naming it, once", async () => {
    const lost = { id: 'm1-dead', address: '10.0.0.1:8080', lastSeenAt: new Date(T0 + 5_000).toISOString() };
    runs.useLeases(new RunLeases(store, lost.id, silent));
    await runs.insertRun(run('of-dead'));
    runs.useLeases(new RunLeases(store, 'm2-alive', silent));
    await runs.insertRun(run('of-other'));
    runs.useLeases(new RunLeases(store, ME, silent));
    await runs.insertRun(run('mine'));
    // Leases not expired: at T0 every lease is fresh; the claim decides, not the lease.
    const now = new Date(T0 + 10_000);
    const ended = await runs.reconcile({ owner: ME, logger: silent, exclusive: false, lost, now });
    expect(ended.map((r) => r.id)).toEqual(['of-dead']);
    expect((await runs.get('of-dead'))?.error).toBe(
      `interrupted: master m1-dead at 10.0.0.1:8080 died before the run ended (no heartbeat since ${lost.lastSeenAt}); ended by master ${ME}`,
    );
    expect((await runs.get('of-other'))?.status).toBe('running');
    expect((await runs.get('mine'))?.status).toBe('running');
    // Another survivor reconciling the same master afterwards ends nothing again.
    expect(await runs.reconcile({ owner: 'm3', logger: silent, exclusive: false, lost, now })).toEqual([]);
  });

  it('on a shared store reclaims only runs whose lease expired', async () => {
    const other = new RunLeases(store, DEAD, silent);
    runs.useLeases(other);
    await runs.insertRun(run('fresh'));
    await runs.insertRun(run('stale'));
    await store.run('UPDATE runs SET lease_expires_at = ? WHERE id = ?', [new Date(T0).toISOString(), 'stale']);
    const interrupted = await runs.reconcile({ owner: ME, logger: silent, exclusive: false, now: new Date(T0 + 1000) });
    expect(interrupted.map((r) => r.id)).toEqual(['stale']);
    expect((await runs.get('fresh'))?.status).toBe('running');
  });

  it('renews the leases of its own running runs only, and clears a lease when the run ends', async () => {
    const mine = new RunLeases(store, ME, silent);
    runs.useLeases(mine);
    await runs.insertRun(run('x'));
    await runs.insertRun(run('y'));
    await runs.finishRun({ ...run('y'), status: 'succeeded', completedAt: new Date(T0).toISOString() });
    await mine.renew(T0 + 5_000);
    const leases = async () =>
      await store.all<{ id: string; lease_owner: string; lease_expires_at: string | null }>(
        'SELECT id, lease_owner, lease_expires_at FROM runs ORDER BY id',
      );
    expect(await leases()).toEqual([
      { id: 'x', lease_owner: ME, lease_expires_at: new Date(T0 + 5_000 + LEASE_TTL_MS).toISOString() },
      { id: 'y', lease_owner: ME, lease_expires_at: null },
    ]);

    // With nothing running, renewing writes nothing: an idle master does not grow the journal.
    await runs.finishRun({ ...run('x'), status: 'succeeded', completedAt: new Date(T0).toISOString() });
    expect((await leases())[0].lease_expires_at).toBeNull();
    const records = (await store.stats()).journalRecords;
    await mine.renew(T0 + 6_000);
    expect((await store.stats()).journalRecords).toBe(records);
  });
});
