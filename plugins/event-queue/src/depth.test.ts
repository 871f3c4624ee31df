// The queue's depth as /metrics reads it (QueueDepth): kept in memory from the store's own writes
// when one master owns the store, read again in the background when several share it. Each step
// compares the figure with a count in the store, on both backends.
import type { Store } from '@runner/plugin-sdk';
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { QueueDepth } from './depth.js';
import { EventStore } from './event-store.js';

const silent = { warn() {} };
const event = (id: string) => ({ id, type: 'task.completed', timestamp: Date.now(), data: { run_id: id } });
const backends = storeBackends('event_depth');
afterAll(() => backends.forEach((b) => b.cleanup()));

/** An event store and the depth it reports to, on a new database. */
async function opened(backend: (typeof backends)[number], exclusive: boolean) {
  const db: OpenBackend = await backend.open();
  // Told of changes only once an event is written, after both exist.
  const events: EventStore = new EventStore(db.store, (delta) => depth.changed(delta));
  const depth = new QueueDepth(() => events.depth(), exclusive, silent);
  await events.open();
  return { db, events, depth, store: db.store as Store };
}

describe.each(backends)('QueueDepth on $name', (backend) => {
  it.skipIf(!backend.available)('follows every status change of the one master without reading the store', async () => {
    const { db, events, depth } = await opened(backend, true);
    try {
      await events.insert([event('e0')]);
      await depth.start();
      expect(depth.current()).toEqual({ pending: 1, processing: 0 });

      // One more waiting, one idle (no hook for it): stored completed, not counted.
      await events.insert([event('e1'), event('e2')], (e) => e.id === 'e2');
      expect(depth.current()).toEqual(await events.depth());
      expect(depth.current()).toEqual({ pending: 2, processing: 0 });

      const claimed = await events.claim('m1', 1, 60_000, 10, (e) => e.id !== 'e1');
      expect(claimed.map((e) => [e.id, e.status])).toEqual([
        ['e0', 'processing'],
        ['e1', 'completed'],
      ]);
      expect(depth.current()).toEqual({ pending: 0, processing: 1 });

      // A lease that expired is taken again: still one processing.
      await events.claim('m2', 120_000, 180_000, 10, () => true);
      expect(depth.current()).toEqual({ pending: 0, processing: 1 });

      // The stalled owner's finish is refused (not counted); the holder's ends it failed.
      const now = 130_000;
      expect(await events.finishEvents([{ id: 'e0', owner: 'm1', status: 'failed', lastError: 'x', now }])).toEqual([
        false,
      ]);
      expect(await events.finishEvents([{ id: 'e0', owner: 'm2', status: 'failed', lastError: 'x', now }])).toEqual([
        true,
      ]);
      expect(depth.current()).toEqual({ pending: 0, processing: 0 });

      await events.retry('e0', now);
      expect(depth.current()).toEqual({ pending: 1, processing: 0 });
      await events.claim('m3', now, now + 60_000, 10, () => true);
      expect(await events.releaseAll(now)).toBe(1);
      expect(depth.current()).toEqual(await events.depth());
      expect(depth.current()).toEqual({ pending: 1, processing: 0 });
    } finally {
      depth.stop();
      await db.close();
    }
  });

  it.skipIf(!backend.available)('with several masters, shows what it last read: others write too', async () => {
    const { db, events, depth } = await opened(backend, false);
    try {
      await depth.start();
      await events.insert([event('s1'), event('s2')]);
      // Not counted from its own writes: the background read (every SHARED_REFRESH_MS) brings it.
      expect(depth.current()).toEqual({ pending: 0, processing: 0 });
      await depth.refresh();
      expect(depth.current()).toEqual({ pending: 2, processing: 0 });
    } finally {
      depth.stop();
      await db.close();
    }
  });
});
