// CPU and network counters read without blocking the event loop. systeminformation's
// currentLoad() runs `cat /proc/stat | grep cpu` and its networkStats('*') runs `ip`, `nmcli` and
// more through execSync: each sample stopped the master's event loop for tens of milliseconds (over
// 300 on a loaded host), which every request in flight waited out; it was most of the p99 of
// `GET /health` and `GET /executions` under load. On Linux the same numbers come from os.cpus()
// and an asynchronous read of /proc/net/dev; elsewhere the caller falls back to systeminformation.
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';

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

  constructor(private readonly file = '/proc/net/dev') {}

  async read(): Promise<InterfaceCounters[] | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return undefined;
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
