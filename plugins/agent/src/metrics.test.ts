import { cpus, loadavg } from 'node:os';
import { describe, expect, it } from 'vitest';
import { MetricsCollector, offered } from './metrics.js';

describe('agent metrics', () => {
  it('the heartbeat summary is cheap and in range', () => {
    const collector = new MetricsCollector({ cacheMs: 5000, diskPath: '/', processLimit: 10 });
    // The best of five: a shared, loaded host may deschedule the process during one call, but a
    // summary that spawned a process or sampled for a while would be slow every time.
    let fastest = Infinity;
    let usage = collector.usage();
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      usage = collector.usage();
      fastest = Math.min(fastest, performance.now() - started);
    }
    expect(fastest).toBeLessThan(20);
    for (const value of [usage.cpu_percent, usage.memory_percent, usage.disk_percent]) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(100);
    }
    expect(usage.memory_percent).toBeGreaterThan(0);
    expect(usage.disk_percent).toBeGreaterThan(0);
  });

  it('reports the load average as CPU until a window of CPU time has passed, not 0', () => {
    const collector = new MetricsCollector({ cacheMs: 5000, diskPath: '/', processLimit: 10 });
    // The load of the last minute, as the collector saw it when made (the same reading, to 0.1).
    const expected = Math.min(100, (loadavg()[0] / cpus().length) * 100);
    expect(collector.usage().cpu_percent).toBeCloseTo(expected, 0);
  });

  it('collects the metrics object with systeminformation, and the detail on request', async () => {
    const collector = new MetricsCollector({ cacheMs: 5000, diskPath: '/', processLimit: 5 });
    const { metrics, processes, network, disks } = await collector.collect({
      processes: true,
      network: true,
      disks: true,
    });
    expect(metrics?.cpu?.cores).toBeGreaterThan(0);
    expect(metrics?.cpu?.load_avg).toHaveLength(3);
    expect(metrics?.memory?.total_bytes).toBeGreaterThan(metrics?.memory?.used_bytes as number);
    expect(metrics?.disk?.total_bytes).toBeGreaterThan(0);
    expect(metrics?.processes).toBeGreaterThan(1);
    expect(new Date(metrics?.collected_at as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(processes?.length).toBeGreaterThan(0);
    expect(processes?.length).toBeLessThanOrEqual(5);
    expect(processes?.[0]).toMatchObject({
      pid: expect.any(Number),
      name: expect.any(String),
      memory_bytes: expect.any(Number),
    });
    expect(network?.some((n) => n.name === 'lo')).toBe(true);
    expect(disks?.some((d) => d.mount === '/')).toBe(true);
    // Cached for the cache duration.
    expect((await collector.collect({ processes: false, network: false, disks: false })).metrics).toBe(metrics);
  }, 20_000);

  it('offers the host less the reserve, at most the limit, and counts as used what the host uses beyond the reserve', () => {
    // 8 GiB, 3 used, 1 kept for the host: 7 offered, 2 of them used.
    expect(offered(8, 3, 1, 0)).toEqual({ total: 7, used: 2, percent: (2 / 7) * 100 });
    // A limit below what is left caps the offer; use beyond it shows it full.
    expect(offered(8, 6, 1, 4)).toEqual({ total: 4, used: 4, percent: 100 });
    // The reserve is the host's own: use under it leaves the offer free.
    expect(offered(4, 0.5, 1, 0)).toEqual({ total: 3, used: 0, percent: 0 });
    // Nothing set: the host as it is.
    expect(offered(16, 4, 0, 0)).toEqual({ total: 16, used: 4, percent: 25 });
    // A reserve of it all leaves nothing to offer, and that is full.
    expect(offered(2, 1, 2, 0)).toEqual({ total: 0, used: 0, percent: 100 });
  });
});
