import { readdir } from 'node:fs/promises';
import { cpus, networkInterfaces, totalmem, freemem } from 'node:os';
import type {
  Disk,
  Metrics,
  MetricsRequest__Output,
  MetricsResponse,
  NetworkInterface,
  Process,
  ResourceUsage,
} from '@runner/proto';
import {
  busyPercent,
  cpuTimes,
  HostSampler,
  roundTenth as round,
  type InterfaceCounters,
  type ResourceSettings,
} from '@runner/plugin-sdk';

type Capacity = Pick<ResourceSettings, 'cpuCores' | 'cpuReserve' | 'memoryBytes' | 'memoryReserveBytes'>;

/**
 * What this agent offers its tasks of one resource: the host's amount less the reserve, at most
 * the limit; and how much of it is in use: what the host uses beyond the reserve (the reserve
 * is the host's own work), as a percent of the offer. Without reserve and limit, the host as is.
 */
export function offered(
  total: number,
  used: number,
  reserve: number,
  limit: number,
): { total: number; used: number; percent: number } {
  const offer = Math.max(0, Math.min(limit || Infinity, total - reserve));
  const inUse = Math.min(offer, Math.max(0, used - reserve));
  return { total: offer, used: inUse, percent: offer > 0 ? (inUse / offer) * 100 : 100 };
}

type Si = typeof import('systeminformation');

/**
 * The agent's host metrics. CPU, memory, disk and network come from the SDK's HostSampler, whose
 * reads never block the event loop (the master's dashboard measures itself with it too); processes
 * and disks, asked for by GetMetrics alone, from systeminformation, whose probes spawn processes,
 * as does the network off Linux. The full object is cached for `cacheMs` (service.md: metrics
 * cache 5 s). The heartbeat's summary uses CPU time deltas of its own window.
 */
export class MetricsCollector {
  private si?: Promise<Si>;
  private cached?: { at: number; metrics: Metrics };
  private readonly sampler: HostSampler;
  private lastCpu = cpuTimes();
  /** The heartbeat's CPU figure; until its first window the sampler's (load average) stands in. */
  private cpuPercent?: number;
  private readonly startedAt = Date.now();

  constructor(
    private readonly options: { cacheMs: number; diskPath: string; processLimit: number; resources?: Capacity },
  ) {
    this.sampler = new HostSampler({ diskPath: options.diskPath, networkFallback: () => this.siNetwork() });
  }

  /** Seconds this agent process has run. */
  uptime(): number {
    return (Date.now() - this.startedAt) / 1000;
  }

  /** Takes the first samples the rates are measured from. */
  prime(): void {
    // CPU usage is measured from here on, not over the busy start-up of the process.
    this.lastCpu = cpuTimes();
    this.sampler.prime();
  }

  usage(): ResourceUsage {
    const now = cpuTimes();
    // Over too short a window the ratio is noise: keep the previous value then.
    const percent = busyPercent(this.lastCpu, now);
    if (percent !== undefined) {
      this.cpuPercent = percent;
      this.lastCpu = now;
    }
    const cpuPercent = this.cpuPercent ?? this.sampler.startingCpuPercent;
    const { cpu, memory } = this.capacity(cpus().length, cpuPercent, totalmem(), totalmem() - freemem());
    return {
      cpu_percent: round(cpu.percent),
      memory_percent: round(memory.percent),
      disk_percent: round(this.sampler.disk().usage_percent),
      uptime: this.uptime(),
    };
  }

  /** The host's CPU (cores, percent busy) and memory (bytes) as this agent offers them (resources.*). */
  private capacity(cores: number, cpuPercent: number, totalBytes: number, usedBytes: number) {
    const r = this.options.resources;
    const cpu = offered(cores, (cpuPercent / 100) * cores, r?.cpuReserve ?? 0, r?.cpuCores ?? 0);
    const memory = offered(totalBytes, usedBytes, r?.memoryReserveBytes ?? 0, r?.memoryBytes ?? 0);
    return { cpu, memory };
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

  /** Interface counters off Linux (no /proc/net/dev): systeminformation, which spawns processes. */
  private async siNetwork(): Promise<InterfaceCounters[]> {
    const stats = await (await this.lib()).networkStats('*').catch(() => []);
    return stats.map((n) => ({
      name: n.iface,
      rx_bytes: n.rx_bytes,
      tx_bytes: n.tx_bytes,
      rx_bytes_per_sec: Math.max(0, n.rx_sec ?? 0),
      tx_bytes_per_sec: Math.max(0, n.tx_sec ?? 0),
    }));
  }

  private lib(): Promise<Si> {
    // Loaded once registered (prime) rather than at start-up, which it would slow down.
    this.si ??= import('systeminformation').then((m) => ((m as { default?: Si }).default ?? m) as Si);
    return this.si;
  }

  private async metrics(): Promise<Metrics> {
    if (this.cached && Date.now() - this.cached.at < this.options.cacheMs) return this.cached.metrics;
    const { cpu, memory, disk, interfaces } = await this.sampler.sample();
    const external = interfaces.filter((n) => n.name !== 'lo');
    const offer = this.capacity(cpu.cores, cpu.usage_percent, memory.total_bytes, memory.used_bytes);
    const metrics: Metrics = {
      // Cores are whole in the protocol: a fraction of one offered still shows one.
      cpu: {
        ...cpu,
        cores: offer.cpu.total > 0 ? Math.max(1, Math.floor(offer.cpu.total)) : 0,
        usage_percent: round(offer.cpu.percent),
      },
      memory: {
        total_bytes: Math.round(offer.memory.total),
        used_bytes: Math.round(offer.memory.used),
        usage_percent: round(offer.memory.percent),
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
    return (await this.sampler.interfaces()).map((n) => ({
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
