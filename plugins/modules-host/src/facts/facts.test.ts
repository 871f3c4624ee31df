import { cpus, hostname, networkInterfaces, totalmem, uptime } from 'node:os';
import { describe, expect, it } from 'vitest';
import { CPU_SAMPLE_MS, type Collectors, type Table } from './collect.js';
import { createFactsModule, FACTS_TTL_MS } from './facts.js';
import { callContext } from './test-support.js';

function countingCollectors(): { collectors: Collectors; reads: Record<string, number> } {
  const reads: Record<string, number> = { host: 0, cpu: 0, memory: 0, disks: 0, network: 0 };
  const fact =
    <T>(name: string, value: T) =>
    async (): Promise<T> => {
      reads[name]++;
      return value;
    };
  return {
    reads,
    collectors: {
      host: fact<Table>('host', { hostname: 'h1' }),
      cpu: fact<Table>('cpu', { cores: 2 }),
      memory: fact<Table>('memory', { total: 10 }),
      disks: fact<Table[]>('disks', [{ mount: '/' }]),
      network: fact<Table[]>('network', [{ name: 'lo' }]),
    },
  };
}

describe('facts (cache and composition)', () => {
  it('reads each fact once within the time to live, and again after it', async () => {
    let now = 0;
    const { collectors, reads } = countingCollectors();
    const facts = createFactsModule({ collectors, now: () => now });
    const { call } = callContext();
    expect(await facts.memory(call)).toEqual({ total: 10 });
    now = FACTS_TTL_MS - 1;
    await facts.memory(call);
    expect(reads.memory).toBe(1);
    now = FACTS_TTL_MS + 1;
    await facts.memory(call);
    expect(reads.memory).toBe(2);
  });

  it('all() gathers every fact and fills the same cache', async () => {
    const { collectors, reads } = countingCollectors();
    const facts = createFactsModule({ collectors });
    const { call } = callContext();
    const all = (await facts.all(call)) as Record<string, any>;
    expect(all).toMatchObject({
      host: { hostname: 'h1' },
      cpu: { cores: 2 },
      memory: { total: 10 },
      disks: [{ mount: '/' }],
      network: [{ name: 'lo' }],
    });
    await Promise.all([facts.host(call), facts.cpu(call), facts.memory(call), facts.disks(call), facts.network(call)]);
    expect(reads).toEqual({ host: 1, cpu: 1, memory: 1, disks: 1, network: 1 });
  });

  it('gives a current uptime even when the host facts are cached', async () => {
    const { collectors } = countingCollectors();
    const facts = createFactsModule({ collectors });
    const { call } = callContext();
    const before = Math.floor(uptime());
    const host = (await facts.host(call)) as Record<string, any>;
    expect(host.hostname).toBe('h1');
    expect(host.uptime).toBeGreaterThanOrEqual(before);
    expect(host.uptime).toBeLessThanOrEqual(Math.floor(uptime()));
  });

  it('names the function when a read fails, and retries on the next call', async () => {
    const { collectors } = countingCollectors();
    let fail = true;
    const facts = createFactsModule({
      collectors: {
        ...collectors,
        disks: async () => {
          if (fail) throw new Error('df exited with 1');
          return [{ mount: '/' }];
        },
      },
    });
    const { call } = callContext();
    await expect(facts.disks(call)).rejects.toThrow('facts.disks: df exited with 1');
    fail = false;
    expect(await facts.disks(call)).toEqual([{ mount: '/' }]);
  });

  it('stops waiting when the task is cancelled', async () => {
    const { collectors } = countingCollectors();
    const facts = createFactsModule({ collectors: { ...collectors, cpu: () => new Promise<Table>(() => {}) } });
    const controller = new AbortController();
    const { call } = callContext({ signal: controller.signal });
    const pending = facts.cpu(call);
    controller.abort(new Error('task timed out after 1s'));
    await expect(pending).rejects.toThrow('facts.cpu: cancelled (task timed out after 1s)');
  });

  it('runs in a dry run as usual (it only reads)', async () => {
    const { collectors } = countingCollectors();
    const facts = createFactsModule({ collectors });
    const { call } = callContext({ dryRun: true });
    expect(await facts.memory(call)).toEqual({ total: 10 });
  });
});

describe('facts (this machine, through systeminformation)', () => {
  const facts = createFactsModule();

  it('host() describes this machine', async () => {
    const { call } = callContext();
    const host = (await facts.host(call)) as Record<string, any>;
    expect(host.hostname).toBe(hostname());
    expect(host.platform).toBe(process.platform);
    expect(typeof host.kernel).toBe('string');
    expect(host.kernel.length).toBeGreaterThan(0);
    expect(host.arch).toBe(process.arch);
    expect(Math.abs(host.uptime - uptime())).toBeLessThan(2);
  });

  it('cpu() counts the cores node sees, with load and usage', async () => {
    const { call } = callContext();
    const cpu = (await facts.cpu(call)) as Record<string, any>;
    expect(cpu.cores).toBe(cpus().length);
    expect(cpu.physical_cores).toBeGreaterThanOrEqual(1);
    expect(cpu.physical_cores).toBeLessThanOrEqual(cpu.cores);
    expect(typeof cpu.model).toBe('string');
    for (const key of ['load1', 'load5', 'load15', 'usage_percent']) {
      expect(cpu[key], key).toBeGreaterThanOrEqual(0);
    }
    expect(cpu.usage_percent).toBeLessThanOrEqual(100);
    if (cpu.speed_mhz !== undefined) expect(cpu.speed_mhz).toBeGreaterThan(0);
  });

  it('memory() adds up', async () => {
    const { call } = callContext();
    const m = (await facts.memory(call)) as Record<string, any>;
    expect(m.total).toBe(totalmem());
    expect(m.used).toBe(m.total - m.available);
    expect(m.available).toBeLessThanOrEqual(m.total);
    expect(m.free).toBeLessThanOrEqual(m.available);
    expect(m.usage_percent).toBeCloseTo((100 * m.used) / m.total, 1);
  });

  it('disks() lists the root file system', async () => {
    const { call } = callContext();
    const disks = (await facts.disks(call)) as Record<string, any>[];
    const root = disks.find((d) => d.mount === (process.platform === 'win32' ? 'C:' : '/'));
    expect(root, JSON.stringify(disks)).toBeDefined();
    expect(root!.size).toBeGreaterThan(0);
    expect(root!.used + root!.available).toBeLessThanOrEqual(root!.size);
    expect(root!.usage_percent).toBeGreaterThan(0);
    expect(root!.usage_percent).toBeLessThanOrEqual(100);
    expect(typeof root!.type).toBe('string');
    expect(typeof root!.read_only).toBe('boolean');
  });

  it('network() lists every interface with all its addresses', async () => {
    const { call } = callContext();
    const nics = (await facts.network(call)) as Record<string, any>[];
    const own = networkInterfaces();
    expect(nics.map((n) => n.name).sort()).toEqual(expect.arrayContaining(Object.keys(own).sort()));
    for (const [name, addresses] of Object.entries(own)) {
      const nic = nics.find((n) => n.name === name)!;
      const v4 = addresses!.filter((a) => a.family === 'IPv4').map((a) => a.address);
      expect(nic.ipv4, name).toEqual(v4);
    }
    const loopback = nics.find((n) => n.ipv4.includes('127.0.0.1'));
    expect(loopback?.internal).toBe(true);
  });

  it('all() answers from the cache the second time', async () => {
    const fresh = createFactsModule();
    const { call } = callContext();
    let started = performance.now();
    const first = (await fresh.all(call)) as Record<string, any>;
    const firstMs = performance.now() - started;
    started = performance.now();
    const second = (await fresh.all(call)) as Record<string, any>;
    const cachedMs = performance.now() - started;
    // The first read measures CPU usage over a window; a cached one cannot take that long.
    expect(firstMs).toBeGreaterThanOrEqual(CPU_SAMPLE_MS - 5);
    expect(cachedMs).toBeLessThan(CPU_SAMPLE_MS);
    expect(second.cpu).toEqual(first.cpu);
    expect(second.disks).toEqual(first.disks);
    expect(Object.keys(first).sort()).toEqual(['cpu', 'disks', 'host', 'memory', 'network']);
  });
});
