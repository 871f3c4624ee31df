import { describe, expect, it } from 'vitest';
import { TurnBatch } from './turn-batch.js';

describe('TurnBatch', () => {
  it('hands the calls of one turn to one flush, each caller getting its own output', async () => {
    const flushed: number[][] = [];
    const batch = new TurnBatch<number, string>(async (inputs) => {
      flushed.push(inputs);
      return inputs.map((n) => `#${n}`);
    });
    const first = await Promise.all([batch.add(1), batch.add(2), batch.add(3)]);
    const second = await batch.add(4);
    expect(first).toEqual(['#1', '#2', '#3']);
    expect(second).toBe('#4');
    expect(flushed).toEqual([[1, 2, 3], [4]]);
  });

  it('flushes at `max` inputs without waiting for the turn to end', async () => {
    const flushed: number[][] = [];
    const batch = new TurnBatch<number, number>(async (inputs) => (flushed.push(inputs), inputs), 2);
    const added = [batch.add(1), batch.add(2)];
    expect(flushed).toEqual([[1, 2]]);
    added.push(batch.add(3));
    expect(await Promise.all(added)).toEqual([1, 2, 3]);
    expect(flushed).toEqual([[1, 2], [3]]);
  });

  it('rejects every call of a batch whose flush failed, whether it threw or rejected', async () => {
    const rejecting = new TurnBatch<number, number>(() => Promise.reject(new Error('disk full')));
    const results = await Promise.allSettled([rejecting.add(1), rejecting.add(2)]);
    expect(results.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual([
      'disk full',
      'disk full',
    ]);
    const throwing = new TurnBatch<number, number>(() => {
      throw new Error('bad input');
    });
    await expect(throwing.add(1)).rejects.toThrow('bad input');
  });
});
