// The audit log and revoked sessions under the store's retention runner, over a real store on each
// backend (a temporary data directory: journal, fsync, reopen; a PostgreSQL database), as the
// master runs them.
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Accounts } from './accounts.js';
import { AuditLog, type AuditEntry } from './audit-log.js';
import { AUDIT_RETENTION_BATCH, auditRetention, revokedSessionRetention } from './audit-retention.js';
import { silentLogger } from './test-support.js';

const DAY = 86_400_000;
const NOW = new Date('2026-06-01T12:00:00.000Z');

let opened: OpenBackend;
let store: OpenBackend['store'];

function entry(daysAgo: number, n: number, now = NOW): AuditEntry {
  return {
    timestamp: new Date(now.getTime() - daysAgo * DAY).toISOString(),
    event: 'api.call',
    user: 'ada',
    ip: '127.0.0.1',
    resource: `/api/v1/things/${n}`,
    action: 'POST /api/v1/things/:n',
    result: 'success',
    status: 200,
    request_id: `req-${n}`,
  };
}

async function auditWith(entries: AuditEntry[]): Promise<AuditLog> {
  const audit = new AuditLog(store, silentLogger);
  await audit.open();
  for (const e of entries) audit.record(e);
  await audit.flush();
  return audit;
}

const resources = async () =>
  (await store.all<{ resource: string }>('SELECT resource FROM audit_log ORDER BY id')).map((r) => r.resource);

for (const backend of storeBackends('audit_retention')) {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    beforeEach(async () => {
      opened = await backend.open();
      store = opened.store;
    });
    afterEach(() => opened.close());
    afterAll(() => backend.cleanup());

    describe('audit retention', () => {
      it('removes records older than audit.retention, keeps the rest, and says so in the stats', async () => {
        // The runner prunes at the real time: these records are dated from it.
        const now = new Date();
        await auditWith([entry(120, 1, now), entry(91, 2, now), entry(89, 3, now), entry(1, 4, now)]);
        store.retain(auditRetention(store, { maxAgeMs: 90 * DAY, maxRecords: 0 }));
        const [before] = (await store.stats()).retention;
        expect(before).toMatchObject({ name: 'audit records', kept: 4, lastPrunedAt: null });
        expect(before.rule).toBe('90d old at most (audit.retention, audit.retention_max_records)');

        await store.pruneNow();
        expect(await resources()).toEqual(['/api/v1/things/3', '/api/v1/things/4']);
        expect((await store.stats()).retention[0]).toMatchObject({
          kept: 2,
          lastRemoved: 2,
          oldest: entry(89, 3, now).timestamp,
        });
      });

      it('keeps the newest audit.retention_max_records, removing in batches, durably', async () => {
        const total = AUDIT_RETENTION_BATCH * 2 + 30;
        await auditWith(Array.from({ length: total }, (_, i) => entry(0, i)));
        const policy = auditRetention(store, { maxAgeMs: 90 * DAY, maxRecords: 25 });
        // What is due is every batch of the pass together, counted by the same bounds.
        expect(await policy.due?.(NOW)).toBe(total - 25);
        expect(await policy.pruneBatch(NOW)).toBe(AUDIT_RETENTION_BATCH);
        expect(await policy.pruneBatch(NOW)).toBe(AUDIT_RETENTION_BATCH);
        expect(await policy.pruneBatch(NOW)).toBe(5);
        expect(await policy.pruneBatch(NOW)).toBe(0);
        expect(await policy.due?.(NOW)).toBe(0);
        const kept = Array.from({ length: 25 }, (_, i) => `/api/v1/things/${total - 25 + i}`);
        expect(await resources()).toEqual(kept);
        expect(await policy.kept()).toEqual({ count: 25, oldest: entry(0, 0).timestamp });

        // What retention removed stays removed after a restart (journal replay included).
        await opened.close();
        opened = await opened.reopen();
        store = opened.store;
        expect(await resources()).toEqual(kept);
      });

      it('applies the age and the count together: whichever removes more', async () => {
        await auditWith([entry(100, 1), entry(95, 2), entry(5, 3), entry(4, 4), entry(3, 5)]);
        const policy = auditRetention(store, { maxAgeMs: 90 * DAY, maxRecords: 2 });
        expect(policy.rule).toBe('90d old at most, the newest 2 (audit.retention, audit.retention_max_records)');
        expect(await policy.due?.(NOW)).toBe(3);
        expect(await policy.pruneBatch(NOW)).toBe(3);
        expect(await resources()).toEqual(['/api/v1/things/4', '/api/v1/things/5']);
        const loose = auditRetention(store, { maxAgeMs: 4.5 * DAY, maxRecords: 0 });
        expect(await loose.due?.(NOW)).toBe(0);
        expect(await loose.pruneBatch(NOW)).toBe(0);
      });

      it('lets records written during a pass land', async () => {
        const audit = await auditWith(Array.from({ length: AUDIT_RETENTION_BATCH * 3 }, (_, i) => entry(200, i)));
        store.retain(auditRetention(store, { maxAgeMs: 90 * DAY, maxRecords: 0 }));
        const pass = store.pruneNow();
        audit.record({ ...entry(0, 9999), timestamp: undefined });
        await Promise.all([pass, audit.flush()]);
        expect(await resources()).toEqual(['/api/v1/things/9999']);
        expect((await store.stats()).retention[0]).toMatchObject({ kept: 1, lastRemoved: AUDIT_RETENTION_BATCH * 3 });
      });
    });

    describe('revoked sessions retention', () => {
      it('forgets revocations once the session has expired anyway, keeping the others in force', async () => {
        const accounts = new Accounts(store);
        const nowSeconds = Math.floor(NOW.getTime() / 1000);
        await accounts.open(nowSeconds);
        await accounts.revokeSession('gone-1', nowSeconds - 60);
        await accounts.revokeSession('gone-2', nowSeconds - 1);
        await accounts.revokeSession('live', nowSeconds + 3600);
        const policy = revokedSessionRetention(store, accounts);
        expect(await policy.kept()).toEqual({ count: 3, oldest: new Date((nowSeconds - 60) * 1000).toISOString() });
        expect(await policy.due?.(NOW)).toBe(2);

        expect(await policy.pruneBatch(NOW)).toBe(2);
        expect(await policy.pruneBatch(NOW)).toBe(0);
        expect(accounts.isRevoked('live')).toBe(true);
        expect(accounts.isRevoked('gone-1')).toBe(false);
        expect(await store.all('SELECT jti FROM auth_revoked')).toEqual([{ jti: 'live' }]);
        expect(await policy.kept()).toEqual({ count: 1, oldest: new Date((nowSeconds + 3600) * 1000).toISOString() });
      });
    });
  });
}
