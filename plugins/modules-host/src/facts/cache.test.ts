import { describe, expect, it } from 'vitest';
import { FactCache } from './cache.js';

function counting<T>(value: () => T): { read: () => Promise<T>; calls: () => number } {
  let calls = 0;
  return {
    read: async () => {
      calls++;
      return value();
    },
    calls: () => calls,
  };
}

describe('FactCache', () => {
  it('reuses a value until the time to live has passed', async () => {
    let now = 1000;
    const cache = new FactCache(5000, () => now);
    let n = 0;
    const source = counting(() => ++n);
    expect(await cache.get('k', source.read)).toBe(1);
    now += 4999;
    expect(await cache.get('k', source.read)).toBe(1);
    now += 1;
    expect(await cache.get('k', source.read)).toBe(2);
    expect(source.calls()).toBe(2);
  });

  it('counts the time to live from when a read finished', async () => {
    let now = 0;
    const cache = new FactCache(100, () => now);
    let finish!: (v: string) => void;
    const slow = cache.get('k', () => new Promise<string>((resolve) => (finish = resolve)));
    now = 500;
    finish('done');
    await slow;
    now = 550;
    const source = counting(() => 'again');
    expect(await cache.get('k', source.read)).toBe('done');
    expect(source.calls()).toBe(0);
  });

  it('shares one read among concurrent callers', async () => {
    const cache = new FactCache(5000);
    const source = counting(() => 'x');
    const results = await Promise.all([cache.get('k', source.read), cache.get('k', source.read)]);
    expect(results).toEqual(['x', 'x']);
    expect(source.calls()).toBe(1);
  });

  it('keeps keys apart', async () => {
    const cache = new FactCache(5000);
    expect(await cache.get('a', async () => 'A')).toBe('A');
    expect(await cache.get('b', async () => 'B')).toBe('B');
  });

  it('does not remember a failed read', async () => {
    const cache = new FactCache(5000);
    await expect(cache.get('k', () => Promise.reject(new Error('df failed')))).rejects.toThrow('df failed');
    expect(await cache.get('k', async () => 'ok')).toBe('ok');
  });
});
