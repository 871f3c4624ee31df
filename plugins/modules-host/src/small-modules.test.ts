// The small host modules on real parts: files in a temp directory (hosts, cron, sysctl's persisted
// file, fstab), a tmpfs mounted for real (the tests run as root in a privileged container), the
// firewall in a network namespace of its own (nftables there, never the host's rules), /proc.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { createCronModule } from './cron/cron.js';
import { createFirewallModule, nftRule, ufwRule } from './firewall/firewall.js';
import { createHostsModule } from './hosts/hosts.js';
import { createMountModule } from './mount/mount.js';
import { createProcessModule } from './process/process.js';
import { createSysctlModule } from './sysctl/sysctl.js';
import { createWaitForModule } from './wait-for/wait-for.js';

const dir = mkdtempSync(join(tmpdir(), 'small-modules-'));
const call = () => luaCallContext().call;
const dry = () => luaCallContext({ dryRun: true }).call;

describe('hosts, cron, sysctl', () => {
  it('hosts: sets an address once, keeps other lines, removes it', async () => {
    const path = join(dir, 'hosts');
    writeFileSync(path, '127.0.0.1 localhost\n# comment\n10.0.0.5 old\n');
    const hosts = createHostsModule();
    expect(await hosts.present(dry(), '10.0.0.5', ['db', 'db.internal'], { path })).toMatchObject({
      changed: true,
      skipped: true,
    });
    expect(await hosts.present(call(), '10.0.0.5', ['db', 'db.internal'], { path })).toEqual({ changed: true, path });
    expect(await hosts.present(call(), '10.0.0.5', ['db', 'db.internal'], { path })).toEqual({ changed: false, path });
    expect(readFileSync(path, 'utf8')).toBe('127.0.0.1 localhost\n# comment\n10.0.0.5 db db.internal\n');
    expect(await hosts.list(call(), { path })).toEqual([
      { address: '127.0.0.1', names: ['localhost'] },
      { address: '10.0.0.5', names: ['db', 'db.internal'] },
    ]);
    expect(await hosts.absent(call(), '10.0.0.5', { path })).toEqual({ changed: true, path });
    expect(await hosts.absent(call(), '10.0.0.5', { path })).toEqual({ changed: false, path });
  });

  it('cron: one file per entry, idempotent, listed; a bad schedule is refused', async () => {
    const cron = createCronModule();
    const cronDir = mkdtempSync(join(dir, 'cron-'));
    const path = join(cronDir, 'backup');
    expect(
      await cron.present(call(), 'backup', '15 3 * * *', '/usr/local/bin/backup', { user: 'backup', dir: cronDir }),
    ).toEqual({ changed: true, path });
    expect(
      await cron.present(call(), 'backup', '15 3 * * *', '/usr/local/bin/backup', { user: 'backup', dir: cronDir }),
    ).toEqual({ changed: false, path });
    expect(await cron.list(call(), { dir: cronDir })).toEqual([
      { name: 'backup', schedule: '15 3 * * *', user: 'backup', command: '/usr/local/bin/backup' },
    ]);
    await expect(cron.present(call(), 'x', '* * *', 'true', { dir: cronDir })).rejects.toThrow('must have five fields');
    expect(await cron.absent(call(), 'backup', { dir: cronDir })).toEqual({ changed: true, path });
    expect(await cron.absent(call(), 'backup', { dir: cronDir })).toEqual({ changed: false, path });
  });

  it('sysctl: reads the running value and persists a setting', async () => {
    const sysctl = createSysctlModule();
    expect(await sysctl.get(call(), 'kernel.ostype')).toBe('Linux');
    await expect(sysctl.get(call(), 'no.such.key')).rejects.toThrow('sysctl.get: no such key: no.such.key');
    const file = join(dir, '99-runner.conf');
    // apply = false: the host's running value is left alone; only the file is written.
    expect(await sysctl.set(call(), 'vm.swappiness', 10, { apply: false, file })).toEqual({
      changed: true,
      key: 'vm.swappiness',
      value: '10',
    });
    expect(await sysctl.set(call(), 'vm.swappiness', '10', { apply: false, file })).toMatchObject({ changed: false });
    expect(readFileSync(file, 'utf8')).toBe('vm.swappiness = 10\n');
  });
});

describe('wait_for, process', () => {
  it('waits for a port, a file and a command, and says what it last saw', async () => {
    const wait = createWaitForModule();
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as { port: number }).port;
    expect(await wait.port(call(), '127.0.0.1', port)).toBeLessThan(5);
    server.close();
    const later = join(dir, 'later');
    setTimeout(() => writeFileSync(later, 'ready'), 150);
    expect(await wait.file(call(), later, { interval: '50ms', contains: 'ready' })).toBeGreaterThan(0);
    await expect(wait.command(call(), 'exit 4', { timeout: '200ms', interval: '100ms' })).rejects.toThrow(
      /^wait_for\.command: not ready after .*: exit 4/,
    );
    expect(await wait.command(dry(), 'exit 4')).toBe(0);
  });

  it('finds processes by name and pid, and signals them', async () => {
    const proc = createProcessModule();
    const sleeper = execFileSync('/bin/sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' }).trim();
    const pid = Number(sleeper);
    expect(await proc.running(call(), pid)).toBe(true);
    expect(((await proc.list(call(), 'sleep')) as { pid: number }[]).map((p) => p.pid)).toContain(pid);
    expect(await proc.kill(dry(), pid)).toMatchObject({ changed: true, skipped: true });
    expect(await proc.kill(call(), pid, { signal: 'SIGKILL' })).toEqual({ changed: true, pids: [pid] });
    await new Promise((r) => setTimeout(r, 100));
    expect(await proc.kill(call(), 99_999_999)).toEqual({ changed: false, pids: [] });
  });
});

describe('mount and firewall, for real where isolated', () => {
  it('mounts a tmpfs once, keeps it in an fstab file, and unmounts it', async () => {
    const mount = createMountModule();
    const target = join(dir, 'mnt');
    const fstab = join(dir, 'fstab');
    expect(
      await mount.mounted(call(), 'rnrtmp', target, { fstype: 'tmpfs', options: 'size=1m', persist: true, fstab }),
    ).toEqual({ changed: true, target });
    expect(
      await mount.mounted(call(), 'rnrtmp', target, { fstype: 'tmpfs', options: 'size=1m', persist: true, fstab }),
    ).toEqual({ changed: false, target });
    expect(await mount.info(call(), target)).toMatchObject({ mounted: true, source: 'rnrtmp', fstype: 'tmpfs' });
    expect(readFileSync(fstab, 'utf8')).toBe(`rnrtmp ${target} tmpfs size=1m 0 0\n`);
    expect(await mount.unmounted(call(), target, { persist: true, fstab })).toEqual({ changed: true, target });
    expect(await mount.info(call(), target)).toEqual({ mounted: false });
    expect(readFileSync(fstab, 'utf8')).toBe('');
  });

  it('adds, finds and removes nftables rules in a namespace of its own', async () => {
    const netns = `rnr-fw-${process.pid}`;
    execFileSync('ip', ['netns', 'add', netns]);
    try {
      const fw = createFirewallModule();
      const opts = { backend: 'nft', netns };
      expect(await fw.allow(call(), 8443, opts)).toEqual({ changed: true, rule: 'runner:allow:tcp:8443:any' });
      expect(await fw.allow(call(), 8443, opts)).toEqual({ changed: false, rule: 'runner:allow:tcp:8443:any' });
      expect(await fw.deny(call(), 23, { ...opts, from: '10.0.0.0/8' })).toMatchObject({ changed: true });
      expect(await fw.rules(call(), opts)).toEqual(['runner:allow:tcp:8443:any', 'runner:deny:tcp:23:10.0.0.0/8']);
      expect(await fw.remove(call(), 8443, opts)).toMatchObject({ changed: true });
      expect(await fw.remove(call(), 8443, opts)).toMatchObject({ changed: false });
    } finally {
      execFileSync('ip', ['netns', 'del', netns]);
    }
    // ufw is not installed here: its commands are checked as built.
    expect(ufwRule({ action: 'allow', port: 80, proto: 'tcp' })).toEqual([
      'ufw',
      'allow',
      'proto',
      'tcp',
      'from',
      'any',
      'to',
      'any',
      'port',
      '80',
    ]);
    expect(nftRule({ action: 'deny', port: 53, proto: 'udp', from: 'fd00::/8' }).slice(6, 12)).toEqual([
      'ip6',
      'saddr',
      'fd00::/8',
      'udp',
      'dport',
      '53',
    ]);
  });
});
