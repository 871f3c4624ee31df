// A run ends once its writes are durable: `flush` waits for the writes issued before it, never for
// later ones, which a steady stream of other runs always has pending (a thousand runs once ended
// together after five seconds of none). `drain` (the plugin's stop) waits for everything.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunRecord, Store } from '@runner/plugin-sdk';
import { openStore, type OpenedStore } from '@runner/plugin-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStore } from './run-store.js';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as never;

function run(id: string): Omit<RunRecord, 'tasks'> {
  return {
    id,
    workflowName: 'deploy',
    status: 'running',
    dryRun: false,
    startedAt: new Date().toISOString(),
    duration: 0,
    trigger: 'api',
    counts: {},
  };
}

describe('RunStore.flush', () => {
  let dir: string;
  let store: OpenedStore;
  let runs: RunStore;
  /** Writes made while `holding`: each completes (as the store says) only when released. */
  const held: (() => void)[] = [];
  let holding = false;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runner-run-flush-'));
    store = await openStore(dir, silent);
    const heldStore = new Proxy(store, {
      get(target, property) {
        if (property === 'run')
          return (sql: string, params?: never) => {
            const write = target.run(sql, params);
            if (!holding) return write;
            return new Promise((resolve, reject) => held.push(() => void write.then(resolve, reject)));
          };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as unknown as Store;
    runs = new RunStore(heldStore);
    await runs.migrate();
    held.length = 0;
    holding = true;
  });

  afterEach(async () => {
    holding = false;
    for (const release of held.splice(0)) release();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits for the writes issued before it, not for those issued after', async () => {
    const first = runs.insertRun(run('r-first'));
    const flushed = runs.flush();
    const later = runs.insertRun(run('r-later'));
    let laterDone = false;
    void later.then(() => (laterDone = true));
    let flushDone = false;
    void flushed.then(() => (flushDone = true));

    await Promise.resolve();
    expect(flushDone).toBe(false); // the first write is not durable yet
    held[0]();
    await first;
    await flushed; // with the later write still held
    expect(laterDone).toBe(false);
    held[1]();
    await later;
  });

  it('drain waits for writes issued while it waits too', async () => {
    const first = runs.insertRun(run('r-first'));
    const drained = runs.drain();
    const later = runs.insertRun(run('r-later'));
    let drainDone = false;
    void drained.then(() => (drainDone = true));
    held[0]();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(drainDone).toBe(false);
    held[1]();
    await later;
    await drained;
  });
});
