import { statfsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { cpus, freemem, loadavg, networkInterfaces, totalmem } from 'node:os';
import type {
  Disk,
  Metrics,
  MetricsRequest__Output,
  MetricsResponse,
  NetworkInterface,
  Process,
  ResourceUsage,
} from '@runner/proto';

import { busyPercent, cpuTimes, NetworkCounters, type InterfaceCounters } from './host-counters.js';

type Si = typeof import('systeminformation');

/**
 * The agent's host metrics (also the master's, for its dashboard). CPU, memory and network come
 * from reads that never block the event loop (host-counters.ts: os.cpus(), os.freemem(), which is
 * MemAvailable on Linux, and /proc/net/dev); processes and disks, asked for by GetMetrics alone,
 * from systeminformation, whose probes spawn processes. The full object is cached for `cacheMs`
 * (service.md: metrics cache 5 s). The heartbeat's summary uses CPU time deltas, available memory
 * and statfs of the root file system.
 */
export class MetricsCollector {
  private si?: Promise<Si>;
  private cached?: { at: number; metrics: Metrics };
  private lastCpu = cpuTimes();
  /** The CPU reading the full metrics' usage is measured from (their own window, not the heartbeat's). */
  private metricsCpu = cpuTimes();
  private metricsCpuPercent: number;
  private readonly network = new NetworkCounters();
  /** One network reading serves a whole collect (metrics and interfaces), so rates span the sample interval. */
  private networkSample?: { at: number; counters: Promise<InterfaceCounters[]> };
  /**
   * Until a window of CPU time has passed (the heartbeat sent right after registering comes
   * sooner), the last minute's load average stands in: `agent list` showed 0 % until the next beat.
   */
  private cpuPercent = Math.min(100, (loadavg()[0] / Math.max(1, cpus().length)) * 100);
  private readonly startedAt = Date.now();

  constructor(private readonly options: { cacheMs: number; diskPath: string; processLimit: number }) {
    this.metricsCpuPercent = this.cpuPercent;
  }

  /** Seconds this agent process has run. */
  uptime(): number {
    return (Date.now() - this.startedAt) / 1000;
  }

  /** Takes the first samples the rates are measured from. */
  prime(): void {
    // CPU usage is measured from here on, not over the busy start-up of the process.
    this.lastCpu = cpuTimes();
    this.metricsCpu = this.lastCpu;
    void this.networkCounters();
  }

  usage(): ResourceUsage {
    const now = cpuTimes();
    // Over too short a window the ratio is noise: keep the previous value then.
    const percent = busyPercent(this.lastCpu, now);
    if (percent !== undefined) {
      this.cpuPercent = percent;
      this.lastCpu = now;
    }
    const cpu = this.cpuPercent;
    const memory = ((totalmem() - freemem()) / totalmem()) * 100;
    return {
      cpu_percent: round(cpu),
      memory_percent: round(memory),
      disk_percent: round(this.disk().usage_percent),
      uptime: this.uptime(),
    };
  }

  async collect(request: MetricsRequest__Output): Promise<MetricsResponse> {
    const [metrics, processes, network, disks] = await Promise.all([
      this.metrics(),
      request.processes ? this.lib().then((si) => this.processes(si)) : Promise.resolve<Process[]>([]),
      request.network ? this.interfaces() : Promise.resolve<NetworkInterface[]>([]),
      request.disks ? this.lib().then((si) => this.disks(si)) : Promise.resolve<Disk[]>([]),
    ]);
    return { metrics, processes, network, disks };
  }

  /** /proc/net/dev where there is one; systeminformation (which spawns processes) elsewhere. */
  private networkCounters(): Promise<InterfaceCounters[]> {
    const now = Date.now();
    if (this.networkSample && now - this.networkSample.at < 1000) return this.networkSample.counters;
    const counters = this.network.read().then(async (read) => {
      if (read) return read;
      const stats = await (await this.lib()).networkStats('*').catch(() => []);
      return stats.map((n) => ({
        name: n.iface,
        rx_bytes: n.rx_bytes,
        tx_bytes: n.tx_bytes,
        rx_bytes_per_sec: Math.max(0, n.rx_sec ?? 0),
        tx_bytes_per_sec: Math.max(0, n.tx_sec ?? 0),
      }));
    });
    this.networkSample = { at: now, counters };
    return counters;
  }

  private lib(): Promise<Si> {
    // Loaded once registered (prime) rather than at start-up, which it would slow down.
    this.si ??= import('systeminformation').then((m) => ((m as { default?: Si }).default ?? m) as Si);
    return this.si;
  }

  private async metrics(): Promise<Metrics> {
    if (this.cached && Date.now() - this.cached.at < this.options.cacheMs) return this.cached.metrics;
    const net = await this.networkCounters();
    const now = cpuTimes();
    const percent = busyPercent(this.metricsCpu, now);
    if (percent !== undefined) {
      this.metricsCpuPercent = percent;
      this.metricsCpu = now;
    }
    const disk = this.disk();
    const [one, five, fifteen] = loadavg();
    const total = totalmem();
    const available = freemem();
    const external = net.filter((n) => n.name !== 'lo');
    const metrics: Metrics = {
      cpu: {
        cores: cpus().length,
        usage_percent: round(this.metricsCpuPercent),
        load_avg: [one, five, fifteen].map(round),
      },
      memory: {
        total_bytes: total,
        used_bytes: total - available,
        usage_percent: round(((total - available) / total) * 100),
      },
      disk,
      network: {
        rx_bytes_per_sec: round(external.reduce((sum, n) => sum + n.rx_bytes_per_sec, 0)),
        tx_bytes_per_sec: round(external.reduce((sum, n) => sum + n.tx_bytes_per_sec, 0)),
      },
      processes: await this.processCount(),
      uptime: this.uptime(),
      collected_at: new Date().toISOString(),
    };
    this.cached = { at: Date.now(), metrics };
    return metrics;
  }

  private disk(): { total_bytes: number; used_bytes: number; usage_percent: number } {
    try {
      const fs = statfsSync(this.options.diskPath);
      const total = fs.blocks * fs.bsize;
      const used = (fs.blocks - fs.bfree) * fs.bsize;
      // As df computes it: used over what non-root users can have.
      const usable = used + fs.bavail * fs.bsize;
      return { total_bytes: total, used_bytes: used, usage_percent: usable > 0 ? round((used / usable) * 100) : 0 };
    } catch {
      return { total_bytes: 0, used_bytes: 0, usage_percent: 0 };
    }
  }

  private async processes(si: Si): Promise<Process[]> {
    const { list } = await si.processes();
    return list
      .sort((a, b) => b.cpu - a.cpu || b.memRss - a.memRss)
      .slice(0, this.options.processLimit)
      .map((p) => ({
        pid: p.pid,
        name: p.name,
        command: [p.command, p.params].filter(Boolean).join(' '),
        cpu_percent: round(p.cpu),
        memory_bytes: p.memRss * 1024,
        user: p.user,
      }));
  }

  private async interfaces(): Promise<NetworkInterface[]> {
    const addresses = networkInterfaces();
    return (await this.networkCounters()).map((n) => ({
      name: n.name,
      addresses: (addresses[n.name] ?? []).map((a) => a.address),
      rx_bytes: n.rx_bytes,
      tx_bytes: n.tx_bytes,
      rx_bytes_per_sec: round(n.rx_bytes_per_sec),
      tx_bytes_per_sec: round(n.tx_bytes_per_sec),
    }));
  }

  /** /proc has a directory per process on Linux; elsewhere systeminformation counts (slower). */
  private async processCount(): Promise<number> {
    try {
      return (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).length;
    } catch {
      return (await (await this.lib()).processes()).all;
    }
  }

  private async disks(si: Si): Promise<Disk[]> {
    return (await si.fsSize()).map((d) => ({
      mount: d.mount,
      fs_type: d.type,
      total_bytes: d.size,
      used_bytes: d.used,
      usage_percent: round(d.use ?? 0),
    }));
  }
}

function round(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 10) / 10 : 0;
}
