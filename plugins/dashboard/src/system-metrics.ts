import { MetricsCollector } from '@runner/plugin-agent/metrics';
import type { SystemMetrics } from './health.js';

/**
 * The master's own metrics in the shape of the `system_metrics` message (service.md section 6),
 * taken with the agent's collector so master and agents measure the same way. Network counters
 * are the totals since boot over every interface but loopback; the per-second rates come beside
 * them, which is what the dashboard charts.
 */
export class SystemMetricsSource {
  private readonly collector: MetricsCollector;

  constructor(options: { cacheMs: number; diskPath: string }) {
    this.collector = new MetricsCollector({ ...options, processLimit: 0 });
    this.collector.prime();
  }

  async read(): Promise<SystemMetrics> {
    const { metrics, network } = await this.collector.collect({ processes: false, network: true, disks: false });
    const external = (network ?? []).filter((n) => n.name !== 'lo');
    // The collector fills these with plain numbers (the proto types also allow strings and Longs).
    const sum = (pick: (n: (typeof external)[number]) => unknown) =>
      external.reduce((total, n) => total + (Number(pick(n)) || 0), 0);
    const m = metrics!;
    return {
      cpu: { usage_percent: Number(m.cpu!.usage_percent), cores: Number(m.cpu!.cores) },
      memory: {
        used: Number(m.memory!.used_bytes),
        total: Number(m.memory!.total_bytes),
        used_percent: Number(m.memory!.usage_percent),
      },
      disk: {
        used: Number(m.disk!.used_bytes),
        total: Number(m.disk!.total_bytes),
        used_percent: Number(m.disk!.usage_percent),
      },
      network: {
        bytes_sent: sum((n) => n.tx_bytes),
        bytes_recv: sum((n) => n.rx_bytes),
        bytes_sent_per_sec: sum((n) => n.tx_bytes_per_sec),
        bytes_recv_per_sec: sum((n) => n.rx_bytes_per_sec),
      },
    };
  }
}
