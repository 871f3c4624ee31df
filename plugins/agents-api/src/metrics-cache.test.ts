import { describe, expect, it } from 'vitest';
import { MetricsCache } from './metrics-cache.js';

describe('MetricsCache', () => {
  it('keeps an answer for its period, per agent and kind, then asks again', async () => {
    let now = 1_000;
    const cache = new MetricsCache(5_000, () => now);
    let calls = 0;
    const load = () => Promise.resolve(++calls);
    expect(await cache.get('a', 'metrics', load)).toBe(1);
    now += 4_999;
    expect(await cache.get('a', 'metrics', load)).toBe(1);
    expect(await cache.get('a', 'disk', load)).toBe(2);
    expect(await cache.get('b', 'metrics', load)).toBe(3);
    now += 1;
    expect(await cache.get('a', 'metrics', load)).toBe(4);
  });

  it('forgets failures and forgotten agents at once, and sweeps expired entries', async () => {
    let now = 0;
    const cache = new MetricsCache(5_000, () => now);
    await expect(cache.get('a', 'metrics', () => Promise.reject(new Error('offline')))).rejects.toThrow('offline');
    expect(await cache.get('a', 'metrics', () => Promise.resolve('up'))).toBe('up');
    cache.forget('a');
    expect(await cache.get('a', 'metrics', () => Promise.resolve('fresh'))).toBe('fresh');
    now = 10_000;
    cache.sweep();
    expect(await cache.get('a', 'metrics', () => Promise.resolve('after sweep'))).toBe('after sweep');
  });
});
