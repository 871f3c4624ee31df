import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { busyPercent, cpuTimes, NetworkCounters, parseNetDev } from './host-counters.js';

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 5000      50    0    0    0     0          0         0     7000      70    0    0    0     0       0          0
`;

describe('host counters', () => {
  it('reads receive and transmit bytes per interface from /proc/net/dev', () => {
    expect(parseNetDev(NET_DEV)).toEqual(
      new Map([
        ['lo', { rx: 1000, tx: 1000 }],
        ['eth0', { rx: 5000, tx: 7000 }],
      ]),
    );
  });

  it('gives rates over the time between two reads, and none without the file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'runner-net-dev-')), 'dev');
    writeFileSync(file, NET_DEV);
    const counters = new NetworkCounters(file);
    const first = await counters.read();
    expect(first?.find((n) => n.name === 'eth0')).toMatchObject({ rx_bytes: 5000, rx_bytes_per_sec: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    writeFileSync(file, NET_DEV.replace('5000', '9000'));
    const eth0 = (await counters.read())?.find((n) => n.name === 'eth0');
    expect(eth0?.rx_bytes).toBe(9000);
    // 4000 bytes over about 50 ms: tens of thousands per second, never negative or infinite.
    expect(eth0?.rx_bytes_per_sec).toBeGreaterThan(4000);
    expect(eth0?.rx_bytes_per_sec).toBeLessThan(4000 / 0.04);
    expect(eth0?.tx_bytes_per_sec).toBe(0);
    expect(await new NetworkCounters(join(file, 'missing')).read()).toBeUndefined();
  });

  it('reads this host (Linux) and measures CPU busy time between readings', async () => {
    const host = await new NetworkCounters().read();
    expect(host?.some((n) => n.name === 'lo')).toBe(true);
    const before = cpuTimes();
    expect(busyPercent(before, before)).toBeUndefined();
    const later = { busy: before.busy + 50, total: before.total + 200 };
    expect(busyPercent(before, later)).toBe(25);
  });
});
