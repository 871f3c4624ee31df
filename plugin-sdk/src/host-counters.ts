// The host's CPU, memory, disk and network, read without blocking the event loop; in the SDK
// because the agent (its heartbeat and GetMetrics) and the master's dashboard both measure the
// host they run on, and measure it the same way.
//
// CPU and network counters read without blocking the event loop. systeminformation's
// currentLoad() runs `cat /proc/stat | grep cpu` and its networkStats('*') runs `ip`, `nmcli` and
// more through execSync: each sample stopped the master's event loop for tens of milliseconds (over
// 300 on a loaded host), which every request in flight waited out; it was most of the p99 of
// `GET /health` and `GET /executions` under load. On Linux the same numbers come from os.cpus()
// and an asynchronous read of /proc/net/dev; elsewhere the caller falls back to systeminformation.
import { statfsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, totalmem } from 'node:os';

/** Busy and total CPU time of every core since boot, in ms (os.cpus() reads /proc/stat in-process). */
export function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const cpu of cpus()) {
    const { user, nice, sys, idle, irq } = cpu.times;
    busy += user + nice + sys + irq;
    total += user + nice + sys + irq + idle;
  }
  return { busy, total };
}

/** The CPU busy percentage between two `cpuTimes()` readings; undefined over too short a window. */
export function busyPercent(
  before: { busy: number; total: number },
  after: { busy: number; total: number },
): number | undefined {
  const total = after.total - before.total;
  // Over less than ~100 ms of CPU time the ratio is noise.
  return total >= 100 ? ((after.busy - before.busy) / total) * 100 : undefined;
}

/** One interface's byte counters since boot, and its rates since the previous reading. */
export interface InterfaceCounters {
  name: string;
  rx_bytes: number;
  tx_bytes: number;
  rx_bytes_per_sec: number;
  tx_bytes_per_sec: number;
}

/** Parses /proc/net/dev: `  eth0: <rx bytes> <7 more rx fields> <tx bytes> ...` after two header lines. */
export function parseNetDev(text: string): Map<string, { rx: number; tx: number }> {
  const counters = new Map<string, { rx: number; tx: number }>();
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (fields.length < 9 || !fields.every(Number.isFinite)) continue;
    counters.set(line.slice(0, colon).trim(), { rx: fields[0], tx: fields[8] });
  }
  return counters;
}

/**
 * Network counters of every interface with rates over the time since the previous read (zero on
 * the first). Undefined where /proc/net/dev does not exist (not Linux).
 */
export class NetworkCounters {
  private last?: { at: number; counters: Map<string, { rx: number; tx: number }> };

  constructor(
    private readonly file = '/proc/net/dev',
    /** Where the file does not exist (not Linux): another source, or none (read() is undefined). */
    private readonly fallback?: () => Promise<InterfaceCounters[]>,
  ) {}

  async read(): Promise<InterfaceCounters[] | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return this.fallback?.();
    }
    const at = Date.now();
    const counters = parseNetDev(text);
    const previous = this.last;
    this.last = { at, counters };
    const seconds = previous ? (at - previous.at) / 1000 : 0;
    return [...counters].map(([name, { rx, tx }]) => {
      const before = previous?.counters.get(name);
      const rate = (now: number, then: number | undefined) =>
        seconds > 0 && then !== undefined ? Math.max(0, (now - then) / seconds) : 0;
      return {
        name,
        rx_bytes: rx,
        tx_bytes: tx,
        rx_bytes_per_sec: rate(rx, before?.rx),
        tx_bytes_per_sec: rate(tx, before?.tx),
      };
    });
  }
}

/** Bytes used and total of the file system holding `path`, and the use as df computes it. */
export interface DiskUsage {
  total_bytes: number;
  used_bytes: number;
  usage_percent: number;
}

export function diskUsage(path: string): DiskUsage {
  try {
    const fs = statfsSync(path);
    const total = fs.blocks * fs.bsize;
    const used = (fs.blocks - fs.bfree) * fs.bsize;
    // As df computes it: used over what non-root users can have.
    const usable = used + fs.bavail * fs.bsize;
    return { total_bytes: total, used_bytes: used, usage_percent: usable > 0 ? roundTenth((used / usable) * 100) : 0 };
  } catch {
    return { total_bytes: 0, used_bytes: 0, usage_percent: 0 };
  }
}

/** One decimal, and 0 for what is not a finite number (a rate over no time). */
export function roundTenth(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 10) / 10 : 0;
}

/** What HostSampler reads: the shape of the agent protocol's Metrics (cpu, memory, disk). */
export interface HostSample {
  cpu: { cores: number; usage_percent: number; load_avg: number[] };
  memory: { total_bytes: number; used_bytes: number; usage_percent: number };
  disk: DiskUsage;
  /** Every interface, loopback included, with rates since the previous reading. */
  interfaces: InterfaceCounters[];
}

/**
 * Samples the host: CPU usage over the time since the previous sample (kept when that window is
 * too short to measure), memory (available memory on Linux), the disk holding `diskPath` and the
 * network counters. One network reading serves the calls of one second, so rates span the sample
 * interval and not the microseconds between two callers.
 */
export class HostSampler {
  private readonly network: NetworkCounters;
  private networkSample?: { at: number; counters: Promise<InterfaceCounters[]> };
  private lastCpu = cpuTimes();
  /**
   * Until a window of CPU time has passed, the last minute's load average stands in (a first
   * reading of 0 % read as an idle host).
   */
  private cpuPercent = Math.min(100, (loadavg()[0] / Math.max(1, cpus().length)) * 100);
  /** The load-average estimate taken at construction, for callers with a CPU window of their own. */
  readonly startingCpuPercent = this.cpuPercent;

  constructor(private readonly options: { diskPath: string; networkFallback?: () => Promise<InterfaceCounters[]> }) {
    this.network = new NetworkCounters(undefined, options.networkFallback);
  }

  /** Takes the first readings the rates are measured from (not over a busy start-up). */
  prime(): void {
    this.lastCpu = cpuTimes();
    void this.interfaces();
  }

  interfaces(): Promise<InterfaceCounters[]> {
    const now = Date.now();
    if (this.networkSample && now - this.networkSample.at < 1000) return this.networkSample.counters;
    const counters = this.network.read().then((read) => read ?? []);
    this.networkSample = { at: now, counters };
    return counters;
  }

  disk(): DiskUsage {
    return diskUsage(this.options.diskPath);
  }

  async sample(): Promise<HostSample> {
    const interfaces = await this.interfaces();
    const now = cpuTimes();
    const percent = busyPercent(this.lastCpu, now);
    if (percent !== undefined) {
      this.cpuPercent = percent;
      this.lastCpu = now;
    }
    const total = totalmem();
    const available = freemem();
    return {
      cpu: { cores: cpus().length, usage_percent: roundTenth(this.cpuPercent), load_avg: loadavg().map(roundTenth) },
      memory: {
        total_bytes: total,
        used_bytes: total - available,
        usage_percent: roundTenth(((total - available) / total) * 100),
      },
      disk: this.disk(),
      interfaces,
    };
  }
}
