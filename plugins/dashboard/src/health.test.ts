import { describe, expect, it } from 'vitest';
import { HealthWatch, type SystemMetrics } from './health.js';

function metrics(cpu: number, memory: number, disk: number): SystemMetrics {
  return {
    cpu: { usage_percent: cpu, cores: 2 },
    memory: { used: memory, total: 100, used_percent: memory },
    disk: { used: disk, total: 100, used_percent: disk },
    network: { bytes_sent: 0, bytes_recv: 0 },
  };
}

describe('HealthWatch', () => {
  it('alerts once when a resource crosses its threshold and once when it comes back', () => {
    const watch = new HealthWatch({ cpu: 90, memory: 85, disk: 90 });
    expect(watch.check(metrics(50, 50, 50))).toEqual([]);
    const firing = watch.check(metrics(95.25, 50, 50));
    expect(firing).toEqual([
      {
        resource: 'cpu',
        state: 'firing',
        value: 95.25,
        threshold: 90,
        message: 'master CPU at 95.3% (threshold 90%)',
      },
    ]);
    // Still over: nothing new, but it is reported as active for late clients.
    expect(watch.check(metrics(97, 50, 50))).toEqual([]);
    expect(watch.active(metrics(97, 50, 50)).map((a) => [a.resource, a.value])).toEqual([['cpu', 97]]);
    const resolved = watch.check(metrics(40, 50, 50));
    expect(resolved).toMatchObject([{ resource: 'cpu', state: 'resolved', value: 40 }]);
    expect(watch.active(metrics(40, 50, 50))).toEqual([]);
  });

  it('uses the threshold of each resource (memory 85 fires where cpu 90 would not)', () => {
    const watch = new HealthWatch({ cpu: 90, memory: 85, disk: 90 });
    const alerts = watch.check(metrics(86, 86, 89.9));
    expect(alerts.map((a) => a.resource)).toEqual(['memory']);
    expect(watch.check(metrics(86, 86, 90)).map((a) => `${a.resource} ${a.state}`)).toEqual(['disk firing']);
  });
});
