// A run's Lua state must die young. A state copy is ~100 KB of small objects: if something keeps
// it alive past a young-generation collection, every scavenge copies and promotes it, and the
// scavenges of a busy master grow from ~1 ms to 15-35 ms (they held the event loop, and so the
// WebSocket and HTTP latency, of test/bench/ws-fanout.mjs). One such hold was the call context's
// getter (execution.ts, CallContext). This counts what outlives two minor collections per run.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { defineLuaModule } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { fn, testRuntime } from './test-support.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

const probe = defineLuaModule({ name: 'probe', description: 'reads the call context', functions: { aborted: fn() } });

describe('a finished run', () => {
  it('leaves (almost) nothing that outlives young-generation collections', async () => {
    const { run } = testRuntime({
      isolation: 'inline',
      modules: [[probe, { aborted: (call) => call.signal.aborted }]],
    });
    const script = 'return probe.aborted(), dry_run';
    for (let i = 0; i < 100; i++) await run(script); // warm: template, pool, compiled code
    const runs = 200;
    gc({ type: 'major' });
    gc({ type: 'minor' });
    gc({ type: 'minor' });
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < runs; i++) expect((await run(script)).values).toEqual([false, false]);
    gc({ type: 'minor' });
    gc({ type: 'minor' });
    const perRunBytes = (process.memoryUsage().heapUsed - before) / runs;
    // A run's own state copy is ~50-100 KB; held states showed 52 KB a run, freed ones ~1 KB.
    expect(perRunBytes).toBeLessThan(16 * 1024);
  });
});
