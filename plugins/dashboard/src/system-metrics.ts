import { HostSampler, roundTenth } from '@runner/plugin-sdk';
import type { SystemMetrics } from './health.js';

/**
 * The master's own metrics in the shape of the `system_metrics` message (service.md section 6),
 * taken with the SDK's HostSampler, which the agent measures with too. Network counters are the
 * totals since boot over every interface but loopback; the per-second rates come beside them,
 * which is what the dashboard charts. Off Linux (no /proc/net/dev) the network reads as zero.
 */
export class SystemMetricsSource {
  private readonly sampler: HostSampler;
  private cached?: { at: number; metrics: Promise<SystemMetrics> };

  constructor(private readonly options: { cacheMs: number; diskPath: string }) {
    this.sampler = new HostSampler({ diskPath: options.diskPath });
    this.sampler.prime();
  }

  read(): Promise<SystemMetrics> {
    if (this.cached && Date.now() - this.cached.at < this.options.cacheMs) return this.cached.metrics;
    const metrics = this.sample();
    this.cached = { at: Date.now(), metrics };
    return metrics;
  }

  private async sample(): Promise<SystemMetrics> {
    const { cpu, memory, disk, interfaces } = await this.sampler.sample();
    const external = interfaces.filter((n) => n.name !== 'lo');
    const sum = (pick: (n: (typeof external)[number]) => number) => external.reduce((total, n) => total + pick(n), 0);
    return {
      cpu: { usage_percent: cpu.usage_percent, cores: cpu.cores },
      memory: { used: memory.used_bytes, total: memory.total_bytes, used_percent: memory.usage_percent },
      disk: { used: disk.used_bytes, total: disk.total_bytes, used_percent: disk.usage_percent },
      network: {
        bytes_sent: sum((n) => n.tx_bytes),
        bytes_recv: sum((n) => n.rx_bytes),
        bytes_sent_per_sec: roundTenth(sum((n) => n.tx_bytes_per_sec)),
        bytes_recv_per_sec: roundTenth(sum((n) => n.rx_bytes_per_sec)),
      },
    };
  }
}
