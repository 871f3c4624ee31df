import type { RunRecord, RunStatus, Store } from '@runner/plugin-sdk';
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStore } from './run-store.js';

type Summary = Omit<RunRecord, 'tasks'>;
const WORKFLOWS = ['build', 'deploy', 'backup'];
const ENDS: RunStatus[] = ['succeeded', 'failed', 'cancelled'];

function summary(i: number): Summary {
  return {
    id: `run-${String(i).padStart(4, '0')}`,
    workflowName: WORKFLOWS[i % WORKFLOWS.length],
    status: 'running',
    dryRun: false,
    // Pairs share a start time, so the id decides their order.
    startedAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000).toISOString(),
    duration: 0,
    trigger: 'api',
    counts: {},
  };
}

for (const backend of storeBackends('run_list')) {
  describe.skipIf(!backend.available)(`RunStore.list on ${backend.name}`, () => {
    let opened: OpenBackend;
    let store: Store;
    let runs: RunStore;
    const all: Summary[] = [];

    beforeEach(async () => {
      opened = await backend.open();
      store = opened.store;
      runs = new RunStore(store);
      await runs.migrate();
      all.length = 0;
      for (let i = 0; i < 120; i++) {
        const run = summary(i);
        await runs.insertRun(run);
        // Every seventh stays running.
        if (i % 7 !== 0) {
          run.status = ENDS[i % ENDS.length];
          await runs.finishRun({ ...run, completedAt: run.startedAt, duration: 1 });
        }
        all.push(run);
      }
    });

    afterEach(() => opened.close());
    afterAll(() => backend.cleanup());

    /** The answer worked out from the runs themselves. */
    function expected(filter: { workflow?: string; status?: RunStatus; since?: string }, limit = 50, offset = 0) {
      const matching = all
        .filter((r) => !filter.workflow || r.workflowName === filter.workflow)
        .filter((r) => !filter.status || r.status === filter.status)
        .filter((r) => !filter.since || r.startedAt >= filter.since)
        .sort((a, b) =>
          a.startedAt === b.startedAt ? b.id.localeCompare(a.id) : b.startedAt.localeCompare(a.startedAt),
        );
      return { ids: matching.slice(offset, offset + limit).map((r) => r.id), total: matching.length };
    }

    it('answers every filter and page like a scan of all runs would', async () => {
      const since = all[60].startedAt;
      const filters = [
        {},
        { status: 'succeeded' as const },
        { status: 'running' as const },
        { workflow: 'deploy' },
        { workflow: 'deploy', status: 'failed' as const },
        { since },
        { since, status: 'cancelled' as const },
        { workflow: 'nope' },
      ];
      for (const filter of filters) {
        for (const [limit, offset] of [
          [50, 0],
          [7, 14],
          [0, 0],
          [50, 1000],
        ]) {
          const page = await runs.list({ ...filter, limit, offset });
          const want = expected(filter, limit, offset);
          expect({ filter, limit, offset, ids: page.runs.map((r) => r.id), total: page.total }).toEqual({
            filter,
            limit,
            offset,
            ...want,
          });
        }
      }
    });

    it('serves the first page again until a run starts or ends, then shows the change', async () => {
      const first = await runs.list();
      expect(await runs.list()).toBe(first);
      expect((await runs.list({ status: 'running' })).total).toBe(expected({ status: 'running' }).total);

      const started = { ...summary(500), startedAt: '2027-01-01T00:00:00.000Z' };
      await runs.insertRun(started);
      const afterStart = await runs.list();
      expect(afterStart).not.toBe(first);
      expect(afterStart.total).toBe(121);
      expect(afterStart.runs[0]).toMatchObject({ id: started.id, status: 'running' });
      const running = await runs.list({ status: 'running' });
      expect(running.total).toBe(expected({ status: 'running' }).total + 1);

      await runs.finishRun({ ...started, status: 'failed', completedAt: started.startedAt, duration: 2 });
      expect((await runs.list()).runs[0]).toMatchObject({ id: started.id, status: 'failed', duration: 2 });
      expect((await runs.list({ status: 'running' })).total).toBe(running.total - 1);
      expect((await runs.list({ status: 'failed', workflow: started.workflowName })).total).toBe(
        expected({ status: 'failed', workflow: started.workflowName }).total + 1,
      );
    });

    // SQLite's plan; PostgreSQL chooses by its statistics (a 120-row table is read whole).
    it.skipIf(backend.name !== 'embedded')(
      'walks an index in the list order for every filter (no sort of all matches)',
      async () => {
        for (const where of [
          '',
          'WHERE status = ?',
          'WHERE workflow_name = ?',
          'WHERE workflow_name = ? AND status = ?',
        ]) {
          const params = where === '' ? [] : where.includes('AND') ? ['build', 'failed'] : ['x'];
          const plan = (
            await store.all<{ detail: string }>(
              `EXPLAIN QUERY PLAN SELECT * FROM runs ${where} ORDER BY started_at DESC, id DESC LIMIT 50`,
              params,
            )
          )
            .map((row) => row.detail)
            .join('; ');
          expect(plan).toMatch(/USING INDEX runs_by_/);
          expect(plan).not.toMatch(/TEMP B-TREE/);
        }
      },
    );
  });
}
