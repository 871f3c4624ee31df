import { getHeapStatistics } from 'node:v8';
import { LuaError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { HeapGuard } from './heap-guard.js';
import { testRuntime } from './test-support.js';

const MiB = 1024 * 1024;
const heldNow = () => {
  const { used_heap_size: heap, external_memory: external } = getHeapStatistics();
  return heap + external;
};

// The real heap is far from full in a test: a tiny ratio makes any heap "full". This is the guard of
// the process's heap (inline mode); a worker's, at the script's memory limit, is in worker-runtime.test.ts.
describe('the heap guard', () => {
  it('stops a script that uses up its slice while the heap is over its share, with the figures', async () => {
    const { run } = testRuntime({ heapGuardRatio: 1e-9, isolation: 'inline' });
    const failure = await run('local t = {} for i = 1, 1e7 do t[i] = i end', {
      run: { workflow: 'w', runId: 'r', task: 'grow', attempt: 1, agent: 'localhost' },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LuaError);
    expect((failure as Error).message).toMatch(
      /^task grow: not enough memory: the runner's heap holds [\d.]+ MiB of its [\d.]+ [MG]iB limit; the script was stopped to keep the runner up$/,
    );
  });

  it('never checks a script that ends within its slice, and is off at ratio 0', async () => {
    expect((await testRuntime({ heapGuardRatio: 1e-9 }).run('return 1 + 1')).values).toEqual([2]);
    const { run } = testRuntime({ heapGuardRatio: 0 });
    expect((await run('local n = 0 for i = 1, 3e5 do n = n + 1 end return n')).values).toEqual([300000]);
  });

  it('leaves a script under the default ratio alone', async () => {
    const { run } = testRuntime();
    expect((await run('local t = {} for i = 1, 2e5 do t[i] = i end return #t')).values).toEqual([200000]);
  });
});

// A pooled worker runs one script after another: what an earlier one left (a 512 MiB string, not
// collected yet) must not stop the next one, which happened to a spinning script in a CI run.
describe('HeapGuard.check with a memory limit', () => {
  it('collects before it decides: garbage does not count against the script', () => {
    let garbage: Uint8Array[] | null = Array.from({ length: 64 }, () => new Uint8Array(MiB).fill(1));
    const withGarbage = heldNow();
    expect(garbage).toHaveLength(64);
    garbage = null;
    expect(new HeapGuard(1, 0, withGarbage - 32 * MiB).check(0)).toBeNull();
  });

  it('still stops a script whose memory is live, with the figures', () => {
    const live = Array.from({ length: 64 }, () => new Uint8Array(MiB).fill(1));
    const limit = heldNow() - 32 * MiB;
    expect(new HeapGuard(1, 0, limit).check(0)).toMatch(
      /^memory limit of [\d.]+ MiB exceeded \(the script's worker holds [\d.]+ MiB\)$/,
    );
    expect(live).toHaveLength(64);
  });
});
