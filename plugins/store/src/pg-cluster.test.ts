// The masters sharing a PostgreSQL store, as the cluster service sees them: several PgCluster
// instances (each with a store of its own, as separate masters have) on one real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MasterInfo } from '@runner/plugin-sdk';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../../test/support/postgres.js';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { PgCluster } from './pg-cluster.js';
import { MAX_NOTIFY_BYTES } from './pg-channel.js';
import { PostgresStore } from './pg-store.js';

const LEASE_MS = 1_000;

describe.skipIf(!postgresReachable())('masters sharing a PostgreSQL store', () => {
  let db: TestDatabase;
  const opened: { store: PostgresStore; cluster: PgCluster }[] = [];

  async function master(): Promise<{ store: PostgresStore; cluster: PgCluster }> {
    const store = await PostgresStore.open({ url: db.url }, recordingLogger());
    const cluster = new PgCluster(store, {
      leaseTimeoutMs: LEASE_MS,
      heartbeatMs: 200,
      address: () => `127.0.0.1:${8000 + opened.length}`,
      logger: recordingLogger(),
    });
    await cluster.join();
    opened.push({ store, cluster });
    return { store, cluster };
  }

  beforeAll(() => {
    db = createTestDatabase('pg_cluster');
  });
  afterAll(async () => {
    for (const { store } of opened) await store.close().catch(() => undefined);
    db?.drop();
  });

  it('carries messages to the others only, in order, long ones by reference, and answers requests', async () => {
    const a = await master();
    const b = await master();
    b.cluster.handle<{ n: number }, number>('double', ({ n }) => n * 2);
    b.cluster.handle('refuse', () => {
      throw new Error('no');
    });
    b.cluster.handle('who-asks', (_payload, from) => from);
    await expect(a.cluster.request(b.cluster.masterId, 'double', { n: 21 })).resolves.toBe(42);
    await expect(a.cluster.request(b.cluster.masterId, 'who-asks', {})).resolves.toBe(a.cluster.masterId);
    await expect(a.cluster.request(b.cluster.masterId, 'refuse', {})).rejects.toThrow('no');
    await expect(a.cluster.request(b.cluster.masterId, 'unknown', {})).rejects.toThrow(/no handler .* unknown/);
    // A request is answered after B's hello (one sender's messages keep their order): A knows B is there.
    const heard: { message: unknown; from: string }[] = [];
    const ownHeard: unknown[] = [];
    b.cluster.subscribe('t', (message, from) => heard.push({ message, from }));
    a.cluster.subscribe('t', (message) => ownHeard.push(message));
    const long = 'x'.repeat(MAX_NOTIFY_BYTES * 2);
    a.cluster.publish('t', 1);
    a.cluster.publish('t', { long });
    await new Promise((resolve) => setImmediate(resolve));
    a.cluster.publish('t', 3);
    await expect.poll(() => heard.length, { timeout: 20_000 }).toBe(3);
    expect(heard.map((h) => h.message)).toEqual([1, { long }, 3]);
    expect(heard.every((h) => h.from === a.cluster.masterId)).toBe(true);
    expect(ownHeard).toEqual([]);

    expect((await a.cluster.masters()).map((m) => m.id).sort()).toEqual(
      [a.cluster.masterId, b.cluster.masterId].sort(),
    );
  }, 60_000);

  it('sends nothing to all while alone, and to a newcomer from its hello on', async () => {
    const lone = createTestDatabase('pg_cluster_lone');
    const stores: PostgresStore[] = [];
    try {
      const join = async () => {
        const store = await PostgresStore.open({ url: lone.url }, recordingLogger());
        stores.push(store);
        const cluster = new PgCluster(store, {
          leaseTimeoutMs: 60_000,
          heartbeatMs: 60_000,
          address: () => '127.0.0.1:1',
          logger: recordingLogger(),
        });
        await cluster.join();
        return cluster;
      };
      const first = await join();
      const long = 'y'.repeat(MAX_NOTIFY_BYTES * 2);
      first.publish('t', long);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // A long message would have left its row: none, nothing was sent.
      expect(lone.psql('SELECT count(*) FROM _store_messages').trim()).toBe('0');
      const second = await join();
      const heard: unknown[] = [];
      second.subscribe('t', (message) => heard.push(message));
      await expect.poll(() => (first.publish('t', long), heard.length), { timeout: 20_000 }).toBeGreaterThan(0);
      expect(heard[0]).toBe(long);
    } finally {
      for (const store of stores) await store.close().catch(() => undefined);
      lone.drop();
    }
  }, 60_000);

  it('claims a dead master once among the survivors and tells only the claimer; a request to it is a 503 naming it', async () => {
    const survivors = [await master(), await master(), await master()];
    const dying = await master();
    const lost: { by: string; master: MasterInfo }[] = [];
    for (const { cluster } of survivors)
      cluster.onMasterLost((m) => void lost.push({ by: cluster.masterId, master: m }));
    for (const { cluster } of survivors) cluster.watch();
    // Silent from now on, as a killed process is: no heartbeat, no leave.
    const deadId = dying.cluster.masterId;
    await dying.store.close();
    await expect.poll(() => lost.filter((l) => l.master.id === deadId).length, { timeout: 30_000 }).toBe(1);
    // Later looks claim nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const claims = lost.filter((l) => l.master.id === deadId);
    expect(claims).toHaveLength(1);
    expect(claims[0]?.master.address).toMatch(/^127\.0\.0\.1:80\d\d$/);
    expect(db.psql(`SELECT count(*) FROM cluster_masters WHERE id = '${deadId}'`).trim()).toBe('0');
    await expect(survivors[0]?.cluster.request(deadId, 'double', { n: 1 })).rejects.toMatchObject({
      code: 'master_unavailable',
      status: 503,
      message: expect.stringContaining(`master ${deadId} is not alive`),
    });
    for (const { cluster } of survivors) await cluster.leave();
  }, 60_000);
});
