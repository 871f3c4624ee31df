import { cpus, loadavg, networkInterfaces as osInterfaces, hostname as osHostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type * as SystemInformation from 'systeminformation';

type Si = typeof SystemInformation.default;
export type Table = Record<string, unknown>;

/** What each fact function reads before caching; tests swap these for counting fakes. */
export interface Collectors {
  host(): Promise<Table>;
  cpu(): Promise<Table>;
  memory(): Promise<Table>;
  disks(): Promise<Table[]>;
  network(): Promise<Table[]>;
}

/** CPU usage is measured over this window when the CPU facts are read. */
export const CPU_SAMPLE_MS = 250;

let loading: Promise<Si> | undefined;

/** systeminformation takes ~70 ms to import: it loads on the first fact read, never at plugin import. */
function systemInformation(): Promise<Si> {
  // A CommonJS package: its exports are the module's default under ESM.
  return (loading ??= import('systeminformation').then((m): Si => m.default));
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const percent = (part: number, whole: number): number => (whole > 0 ? round2((100 * part) / whole) : 0);

export const systemCollectors: Collectors = {
  async host() {
    const os = await (await systemInformation()).osInfo();
    return {
      hostname: os.hostname || osHostname(),
      fqdn: os.fqdn || os.hostname || osHostname(),
      platform: os.platform,
      distro: os.distro,
      release: os.release,
      codename: os.codename || undefined,
      kernel: os.kernel,
      arch: os.arch,
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    };
  },

  async cpu() {
    const [info, usage] = await Promise.all([(await systemInformation()).cpu(), cpuUsage(CPU_SAMPLE_MS)]);
    const [load1, load5, load15] = loadavg();
    const first = cpus()[0];
    // Virtual machines often report no clock speed at all: nil then, rather than a misleading 0.
    const mhz = Math.round((info.speed || info.speedMax || 0) * 1000) || first?.speed || undefined;
    return {
      model: first?.model?.trim() || `${info.manufacturer} ${info.brand}`.trim(),
      vendor: info.vendor || info.manufacturer,
      cores: info.cores || cpus().length,
      physical_cores: info.physicalCores,
      speed_mhz: mhz,
      load1: round2(load1),
      load5: round2(load5),
      load15: round2(load15),
      usage_percent: usage,
    };
  },

  async memory() {
    const mem = await (await systemInformation()).mem();
    // "used" is what programs hold: page cache the kernel hands back on demand is not counted.
    const used = mem.total - mem.available;
    return {
      total: mem.total,
      used,
      free: mem.free,
      available: mem.available,
      cached: mem.buffcache,
      usage_percent: percent(used, mem.total),
      swap_total: mem.swaptotal,
      swap_used: mem.swapused,
      swap_free: mem.swapfree,
    };
  },

  async disks() {
    const filesystems = await (await systemInformation()).fsSize();
    return filesystems.map((fs) => ({
      mount: fs.mount,
      device: fs.fs,
      type: fs.type,
      size: fs.size,
      used: fs.used,
      available: fs.available,
      // As df computes it: space reserved for root counts as neither used nor available.
      usage_percent: percent(fs.used, fs.used + fs.available),
      read_only: fs.rw === false,
    }));
  },

  async network() {
    const si = await systemInformation();
    const detailed = (await si.networkInterfaces()) as SystemInformation.Systeminformation.NetworkInterfacesData[];
    // systeminformation keeps one address per family; node:os lists them all.
    const addresses = osInterfaces();
    const names = [...new Set([...detailed.map((i) => i.iface), ...Object.keys(addresses)])];
    return names.map((name) => {
      const info = detailed.find((i) => i.iface === name);
      const own = addresses[name] ?? [];
      const ipv4 = own.filter((a) => a.family === 'IPv4').map((a) => a.address);
      const ipv6 = own.filter((a) => a.family === 'IPv6').map((a) => a.address);
      if (ipv4.length === 0 && info?.ip4) ipv4.push(info.ip4);
      if (ipv6.length === 0 && info?.ip6) ipv6.push(info.ip6);
      return {
        name,
        ipv4,
        ipv6,
        mac: info?.mac || own[0]?.mac || undefined,
        internal: info?.internal ?? own.some((a) => a.internal),
        state: info?.operstate || undefined,
        default: info?.default ?? false,
        type: info?.type || undefined,
        mtu: info?.mtu ?? undefined,
        speed_mbps: info?.speed ?? undefined,
      };
    });
  },
};

/** Busy share of all CPUs over `windowMs`: a load-since-boot average would hide what happens now. */
async function cpuUsage(windowMs: number): Promise<number> {
  const before = cpuTimes();
  await delay(windowMs);
  const after = cpuTimes();
  const total = after.total - before.total;
  return total > 0 ? percent(total - (after.idle - before.idle), total) : 0;
}

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}
