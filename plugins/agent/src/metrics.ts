import { statfsSync, readdirSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type {
  Disk,
  Metrics,
  MetricsRequest__Output,
  MetricsResponse,
  NetworkInterface,
  Process,
  ResourceUsage,
} from '@runner/proto';

type Si = typeof import('systeminformation');

/**
 * The agent's host metrics. The full metrics object (GetMetrics) comes from systeminformation
 * and is cached for `cacheMs` (service.md: metrics cache 5 s), because several of its probes spawn
 * processes or sample for a while. The heartbeat's summary runs every interval on every agent, so
 * it uses only cheap reads: CPU time deltas, available memory, and statfs of the root file system.
 */
export class MetricsCollector {
  private si?: Promise<Si>;
  private cached?: { at: number; metrics: Metrics };
  private lastCpu = cpuTimes();
  /**
   * Until a window of CPU time has passed (the heartbeat sent right after registering comes
   * sooner), the last minute's load average stands in: `agent list` showed 0 % until the next beat.
   */
  private cpuPercent = Math.min(100, (loadavg()[0] / Math.max(1, cpus().length)) * 100);
  private readonly startedAt = Date.now();

  constructor(private readonly options: { cacheMs: number; diskPath: string; processLimit: number }) {}

  /** Seconds this agent process has run. */
  uptime(): number {
    return (Date.now() - this.startedAt) / 1000;
  }

  /** Loads systeminformation and takes the first samples its rates are measured from. */
  prime(): void {
    // CPU usage is measured from here on, not over the busy start-up of the process.
    this.lastCpu = cpuTimes();
    void this.lib().then(async (si) => {
      await Promise.allSettled([si.currentLoad(), si.networkStats('*')]);
    });
  }

  usage(): ResourceUsage {
    const now = cpuTimes();
    const busy = now.busy - this.lastCpu.busy;
    const total = now.total - this.lastCpu.total;
    // Over less than ~100 ms of CPU time the ratio is noise: keep the previous value then.
    if (total >= 100) {
      this.cpuPercent = (busy / total) * 100;
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
    const si = await this.lib();
    const [metrics, processes, network, disks] = await Promise.all([
      this.metrics(si),
      request.processes ? this.processes(si) : Promise.resolve<Process[]>([]),
      request.network ? this.interfaces(si) : Promise.resolve<NetworkInterface[]>([]),
      request.disks ? this.disks(si) : Promise.resolve<Disk[]>([]),
    ]);
    return { metrics, processes, network, disks };
  }

  private lib(): Promise<Si> {
    // Loaded once registered (prime) rather than at start-up, which it would slow down.
    this.si ??= import('systeminformation').then((m) => ((m as { default?: Si }).default ?? m) as Si);
    return this.si;
  }

  private async metrics(si: Si): Promise<Metrics> {
    if (this.cached && Date.now() - this.cached.at < this.options.cacheMs) return this.cached.metrics;
    const [load, mem, net] = await Promise.all([si.currentLoad(), si.mem(), si.networkStats('*').catch(() => [])]);
    const disk = this.disk();
    const [one, five, fifteen] = loadavg();
    const metrics: Metrics = {
      cpu: {
        cores: load.cpus?.length || cpus().length,
        usage_percent: round(load.currentLoad),
        load_avg: [one, five, fifteen].map(round),
      },
      memory: {
        total_bytes: mem.total,
        used_bytes: mem.total - mem.available,
        usage_percent: round(((mem.total - mem.available) / mem.total) * 100),
      },
      disk,
      network: {
        rx_bytes_per_sec: round(net.reduce((sum, n) => sum + (n.iface === 'lo' ? 0 : Math.max(0, n.rx_sec ?? 0)), 0)),
        tx_bytes_per_sec: round(net.reduce((sum, n) => sum + (n.iface === 'lo' ? 0 : Math.max(0, n.tx_sec ?? 0)), 0)),
      },
      processes: await processCount(si),
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

  private async interfaces(si: Si): Promise<NetworkInterface[]> {
    const [interfaces, stats] = await Promise.all([si.networkInterfaces(), si.networkStats('*').catch(() => [])]);
    const list = Array.isArray(interfaces) ? interfaces : [interfaces];
    return list.map((i) => {
      const s = stats.find((n) => n.iface === i.iface);
      return {
        name: i.iface,
        addresses: [i.ip4, i.ip6].filter(Boolean),
        rx_bytes: s?.rx_bytes ?? 0,
        tx_bytes: s?.tx_bytes ?? 0,
        rx_bytes_per_sec: round(Math.max(0, s?.rx_sec ?? 0)),
        tx_bytes_per_sec: round(Math.max(0, s?.tx_sec ?? 0)),
      };
    });
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

/** /proc has a directory per process on Linux; elsewhere systeminformation counts (slower). */
async function processCount(si: Si): Promise<number> {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length;
  } catch {
    return (await si.processes()).all;
  }
}

function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const cpu of cpus()) {
    const { user, nice, sys, idle, irq } = cpu.times;
    busy += user + nice + sys + irq;
    total += user + nice + sys + irq + idle;
  }
  return { busy, total };
}

function round(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 10) / 10 : 0;
}
