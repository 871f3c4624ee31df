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
    trigger: i % 4 === 0 ? 'cli' : 'api',
    user: i % 5 === 0 ? 'alice' : 'bob',
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
        // Every sixth had a unit on the agent web-1.
        if (i % 6 === 0) {
          runs.queueTask(run.id, 0, {
            name: 'on-web',
            task: 'on-web',
            agent: 'web-1',
            status: 'succeeded',
            attempts: 1,
            duration: 0,
            log: [],
            logTruncated: false,
          });
          await runs.flush();
        }
        all.push(run);
      }
    });

    afterEach(() => opened.close());
    afterAll(() => backend.cleanup());

    /** The answer worked out from the runs themselves. */
    function expected(
      filter: {
        workflow?: string;
        status?: RunStatus;
        since?: string;
        trigger?: string;
        user?: string;
        agent?: string;
      },
      limit = 50,
      offset = 0,
    ) {
      const matching = all
        .filter((r) => !filter.workflow || r.workflowName === filter.workflow)
        .filter((r) => !filter.trigger || r.trigger === filter.trigger)
        .filter((r) => !filter.user || r.user === filter.user)
        .filter((r) => !filter.agent || Number(r.id.slice(4)) % 6 === 0)
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
        { trigger: 'cli' as const },
        { user: 'alice', status: 'failed' as const },
        { agent: 'web-1' },
        { agent: 'web-1', trigger: 'cli' as const, since },
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

    it('counts runs per hour or day by status since a time, with the list’s filters', async () => {
      const tally = (runsIn: Summary[]) =>
        runsIn.reduce<Record<string, number>>((c, r) => ({ ...c, [r.status]: (c[r.status] ?? 0) + 1 }), {});
      expect(await runs.histogram({ since: '2025-12-31T00:00:00Z', bucket: 'hour' })).toEqual([
        { start: '2026-01-01T00:00:00.000Z', counts: tally(all) },
      ]);
      await runs.insertRun({ ...summary(601), startedAt: '2026-01-02T05:30:00.000Z' });
      expect(await runs.histogram({ since: '2025-12-31T00:00:00Z', bucket: 'day' })).toEqual([
        { start: '2026-01-01T00:00:00.000Z', counts: tally(all) },
        { start: '2026-01-02T00:00:00.000Z', counts: { running: 1 } },
      ]);
      expect(await runs.histogram({ since: '2026-01-02T00:00:00Z', bucket: 'hour' })).toEqual([
        { start: '2026-01-02T05:00:00.000Z', counts: { running: 1 } },
      ]);
      const cli = all.filter((r) => r.trigger === 'cli' && r.user === 'alice');
      expect(
        await runs.histogram({ since: '2025-12-31T00:00:00Z', bucket: 'day', trigger: 'cli', user: 'alice' }),
      ).toEqual([{ start: '2026-01-01T00:00:00.000Z', counts: tally(cli) }]);
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
