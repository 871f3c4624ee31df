// The claim primitive of the scheduler's store on both backends: claims asked for together are
// written in one transaction, and each slot is still taken by exactly one claimer, even when two
// masters (two JobStores over one database) claim the same slots at once.
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { JobStore, type ClaimRow } from './job-store.js';

const SLOT_AT = '2026-12-01T10:00:00.000Z';
const row = (job: string, master: string): ClaimRow => ({
  job,
  kind: 'schedule',
  slot_at: SLOT_AT,
  outcome: 'claimed',
  master,
  claimed_at: SLOT_AT,
  detail: null,
});

for (const backend of storeBackends('scheduler_claims')) {
  describe.skipIf(!backend.available)(`scheduler claims on ${backend.name}`, () => {
    const opened: OpenBackend[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((o) => o.close()));
    });
    afterAll(() => backend.cleanup());

    it('writes the claims of one pass in one transaction; each slot goes to one claimer', async () => {
      const first = await backend.open();
      opened.push(first);
      const jobs = new JobStore(first.store);
      await jobs.open();
      // A second master: on PostgreSQL another pool on the same database, on sql.js the same store.
      const second = backend.name === 'postgres' ? await first.reopen() : first;
      if (second !== first) opened.push(second);
      const other = new JobStore(second.store);
      await other.open();
      // PostgreSQL: one multi-row insert in a transaction; sql.js: a transaction of single inserts.
      const transactions = vi.spyOn(first.store, backend.name === 'postgres' ? 'withTransaction' : 'transaction');

      const names = Array.from({ length: 40 }, (_, i) => `job-${i}`);
      const [mine, theirs] = await Promise.all([
        Promise.all(names.map((name) => jobs.claim(row(name, 'a')))),
        Promise.all(names.map((name) => other.claim(row(name, 'b')))),
      ]);
      // One transaction per JobStore (both write through the one store on sql.js).
      expect(transactions).toHaveBeenCalledTimes(second === first ? 2 : 1);
      names.forEach((_, i) => expect(Number(mine[i]) + Number(theirs[i])).toBe(1));
      const rows = await first.store.all<{ job: string; master: string }>('SELECT job, master FROM scheduler_slots');
      expect(rows).toHaveLength(40);
      for (const { job, master } of rows) expect(master === 'a').toBe(mine[names.indexOf(job)]);
      // A restart's claim of a slot already taken is refused.
      expect(await jobs.claim(row('job-0', 'a'))).toBe(false);
      // The same slot asked twice in one batch goes to one of the two.
      const twice = await Promise.all([jobs.claim(row('job-new', 'a')), jobs.claim(row('job-new', 'a'))]);
      expect(twice.filter(Boolean)).toHaveLength(1);
    });

    it('lists the open slots of every job at once, by job', async () => {
      const opened1 = await backend.open();
      opened.push(opened1);
      const jobs = new JobStore(opened1.store);
      await jobs.open();
      await Promise.all([
        jobs.claim(row('a', 'm')),
        jobs.claim(row('b', 'm')),
        jobs.claim({ ...row('b', 'm'), slot_at: '2026-12-01T10:01:00.000Z' }),
      ]);
      await jobs.update(row('a', 'm'), { outcome: 'started', finished_at: SLOT_AT });
      const open = await jobs.openSlotsByJob();
      expect([...open.keys()]).toEqual(['b']);
      expect(open.get('b')!.map((s) => s.slot_at)).toEqual([SLOT_AT, '2026-12-01T10:01:00.000Z']);
      expect(open.get('b')).toEqual(await jobs.openSlots('b'));
    });
  });
}
