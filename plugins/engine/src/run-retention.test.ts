import type { RetentionPolicy, RunRecord } from '@runner/plugin-sdk';
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RETENTION_BATCH } from './run-retention.js';
import { RunStore } from './run-store.js';

const DAY = 86_400_000;
const NOW = new Date('2026-06-01T00:00:00.000Z');

/** Run `i` started `i` hours before NOW (run-0000 is the newest). */
function run(i: number): Omit<RunRecord, 'tasks'> {
  return {
    id: `run-${String(i).padStart(4, '0')}`,
    workflowName: 'wf',
    status: 'running',
    dryRun: false,
    startedAt: new Date(NOW.getTime() - i * 3_600_000).toISOString(),
    duration: 0,
    counts: {},
  };
}

for (const backend of storeBackends('run_retention')) {
  describe.skipIf(!backend.available)(`retention of executions and task logs on ${backend.name}`, () => {
    let opened: OpenBackend;
    let store: OpenBackend['store'];
    let runs: RunStore;

    beforeEach(async () => {
      opened = await backend.open();
      store = opened.store;
      runs = new RunStore(store);
      await runs.migrate();
    });

    afterEach(() => opened.close());
    afterAll(() => backend.cleanup());

    /** `n` runs an hour apart, each with one task and a log line; those in `running` stay running. */
    async function seed(n: number, running: number[] = []) {
      for (let i = 0; i < n; i++) {
        const r = run(i);
        await runs.insertRun(r);
        runs.queueTask(r.id, 0, {
          name: 't',
          task: 't',
          agent: 'localhost',
          status: 'succeeded',
          attempts: 1,
          duration: 0,
          log: [{ timestamp: r.startedAt, level: 'info', message: `line of ${r.id}` }],
          logTruncated: false,
        });
        if (!running.includes(i)) await runs.finishRun({ ...r, status: 'succeeded', completedAt: r.startedAt });
      }
      await runs.flush();
    }

    async function pruneAll(policy: RetentionPolicy): Promise<number[]> {
      const batches: number[] = [];
      for (let n; (n = await policy.pruneBatch(NOW)) > 0;) batches.push(n);
      return batches;
    }

    it('removes finished runs beyond the count and the age, oldest first, in batches, never a running one', async () => {
      await seed(600, [550]);
      const [executions] = runs.retentionPolicies({ maxAgeMs: 20 * DAY, maxRuns: 100, logMaxAgeMs: 0, logMaxRuns: 0 });
      expect(executions.rule).toBe(
        '20d old at most, the newest 100 (engine.retention.max_age, engine.retention.max_runs)',
      );
      expect((await runs.list()).total).toBe(600);
      // Due: every batch of the pass, counted by the same bound (the running run is not due).
      expect(await executions.due?.(NOW)).toBe(RETENTION_BATCH * 2 + 99);
      expect(await pruneAll(executions)).toEqual([RETENTION_BATCH, RETENTION_BATCH, 99]);
      expect(await executions.due?.(NOW)).toBe(0);
      // The newest 100 and the running one.
      const left = await runs.list({ limit: 500 });
      expect(left.total).toBe(101);
      expect(left.runs.map((r) => r.id)).toEqual([...Array.from({ length: 100 }, (_, i) => run(i).id), run(550).id]);
      expect(await store.get('SELECT COUNT(*) AS n FROM run_tasks')).toEqual({ n: 101 });
      expect(await executions.kept()).toEqual({ count: 101, oldest: run(550).startedAt });

      // By age alone: 48 hours old at most (run 48 started exactly 48 hours ago and stays).
      const [byAge] = runs.retentionPolicies({ maxAgeMs: 2 * DAY, maxRuns: 0, logMaxAgeMs: 0, logMaxRuns: 0 });
      expect(await byAge.due?.(NOW)).toBe(51);
      expect(await pruneAll(byAge)).toEqual([51]);
      expect((await runs.list({ limit: 500 })).runs.map((r) => r.id)).toEqual([
        ...Array.from({ length: 49 }, (_, i) => run(i).id),
        run(550).id,
      ]);
    });

    it('keeps everything when no limit is set', async () => {
      await seed(5);
      const [executions, logs] = runs.retentionPolicies({ maxAgeMs: 0, maxRuns: 0, logMaxAgeMs: 0, logMaxRuns: 0 });
      expect(executions.rule).toBe('all (no limit set) (engine.retention.max_age, engine.retention.max_runs)');
      expect(await executions.due?.(NOW)).toBe(0);
      expect(await logs.due?.(NOW)).toBe(0);
      expect(await executions.pruneBatch(NOW)).toBe(0);
      expect(await logs.pruneBatch(NOW)).toBe(0);
      expect((await runs.list()).total).toBe(5);
    });

    it('replaces the task logs of older runs by a note and keeps their records', async () => {
      await seed(30);
      const [, logs] = runs.retentionPolicies({ maxAgeMs: 0, maxRuns: 0, logMaxAgeMs: DAY, logMaxRuns: 10 });
      expect(await logs.due?.(NOW)).toBe(20);
      expect(await pruneAll(logs)).toEqual([20]);
      expect(await logs.due?.(NOW)).toBe(0);
      expect((await runs.list()).total).toBe(30);
      expect((await runs.get(run(9).id))?.tasks[0]).toMatchObject({ log: [{ message: `line of ${run(9).id}` }] });
      const pruned = (await runs.get(run(10).id))?.tasks[0];
      expect(pruned).toMatchObject({ status: 'succeeded', logTruncated: true });
      expect(pruned?.log).toEqual([
        {
          timestamp: NOW.toISOString(),
          level: 'info',
          message: 'log removed by retention (engine.retention.log_max_age, engine.retention.log_max_runs)',
        },
      ]);
      expect(await logs.kept()).toEqual({ count: 10, oldest: run(9).startedAt });
      // Done once: the next pass finds nothing.
      expect(await logs.pruneBatch(NOW)).toBe(0);
    });

    it('prunes in the background: writes issued during a pass complete before it ends', async () => {
      await seed(1000);
      const [executions] = runs.retentionPolicies({ maxAgeMs: 0, maxRuns: 10, logMaxAgeMs: 0, logMaxRuns: 0 });
      store.retain(executions);
      const order: string[] = [];
      const pass = store.pruneNow().then(() => order.push('pass ended'));
      const later = run(2000);
      const write = runs.insertRun({ ...later, startedAt: NOW.toISOString() }).then(() => order.push('write done'));
      await Promise.all([pass, write]);
      // In process (sql.js) the write lands between two batches of the pass. On PostgreSQL both go
      // over their own connections, and on a busy machine the pass may end first: what holds there
      // is that the write was not refused or lost (checked below).
      if (backend.name === 'embedded') expect(order).toEqual(['write done', 'pass ended']);
      else expect(order.sort()).toEqual(['pass ended', 'write done']);
      // Each batch takes the bound again: the run written meanwhile is among the newest 10 kept (or,
      // on PostgreSQL, landed after the pass's last batch, an 11th until the next pass).
      const kept = (await runs.list()).runs.map((r) => r.id);
      const older = backend.name === 'embedded' ? 9 : kept.length - 1;
      expect([9, 10]).toContain(older);
      expect(kept).toEqual([later.id, ...Array.from({ length: older }, (_, i) => run(i).id)]);
      const stats = (await store.stats()).retention;
      // On PostgreSQL the write may land after the batch that counted what to keep and remove.
      expect(stats).toEqual([
        expect.objectContaining(
          backend.name === 'embedded'
            ? { name: 'executions', kept: 10, lastRemoved: 991, lastPrunedAt: expect.any(String) }
            : { name: 'executions', lastPrunedAt: expect.any(String) },
        ),
      ]);
    });
  });
}
