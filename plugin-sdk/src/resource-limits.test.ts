// resources.*: how the limits are held. The cgroup v2 cases run against a directory laid out as
// the kernel's cgroup2 file system is (cgroup.controllers, subtree_control, procs): no kernel here
// offers a v2 controller (this host binds them all to v1), so the files stand in for it, and what
// is checked is which files are written with what. The commands are real processes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { confinedCommand, confineResources, type CgroupHost } from './resource-limits.js';

const run = promisify(execFile);
const MIB = 1024 * 1024;
const LIMITS = { cpuCores: 0.5, memoryBytes: 256 * MIB, fileBytes: 0, enforcement: 'auto' as const };

/** A cgroup directory as cgroup2 shows one: which controllers it has, which it passes on, its processes. */
function cgroupDir(dir: string, controllers: string, enabled = '', procs = ''): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cgroup.controllers'), controllers);
  writeFileSync(join(dir, 'cgroup.subtree_control'), enabled);
  writeFileSync(join(dir, 'cgroup.procs'), procs);
  return dir;
}

const read = (file: string) => readFileSync(file, 'utf8');

describe('resources held by a cgroup v2', () => {
  it('at the root of the unified hierarchy, where its controllers are offered and enabled', () => {
    const root = cgroupDir(mkdtempSync(join(tmpdir(), 'runner-cg2-')), 'cpu io memory pids', 'cpu memory');
    const host: CgroupHost = { v2Root: root, v1Dir: '/nonexistent', selfCgroup: '0::/\n' };
    const confinement = confineResources('runner-agent-0123456789abcdef', LIMITS, host);
    const dir = join(root, 'runner-agent-0123456789abcdef');
    expect(confinement.kind).toBe('cgroup v2');
    expect(confinement.cgroups).toEqual([dir]);
    expect(read(join(dir, 'memory.max'))).toBe(String(256 * MIB));
    expect(read(join(dir, 'cpu.max'))).toBe('50000 100000');
    expect(confinement.lines).toEqual([
      `memory: limited by ${dir} (memory.max=${256 * MIB})`,
      `cpu: limited by ${dir} (cpu.max=50000 100000)`,
    ]);
    // Commands join it as they start; a process started before it starts anything is put in.
    expect(JSON.parse(confinement.commandSetting(true) as string)).toEqual({ join: [dir] });
    expect(confinement.commandSetting(false)).toBeUndefined();
  });

  it('in the subtree systemd delegated to the service (Delegate=yes): its processes move to a leaf, the controllers are enabled for the children', () => {
    const root = cgroupDir(mkdtempSync(join(tmpdir(), 'runner-cg2-')), 'cpu io memory pids', 'cpu io memory pids');
    // The root's subtree_control is not ours: a service user cannot write it.
    const service = cgroupDir(join(root, 'system.slice', 'runner-agent.service'), 'cpu memory pids', '', '4242\n');
    const host: CgroupHost = {
      v2Root: root,
      v1Dir: '/nonexistent',
      selfCgroup: '0::/system.slice/runner-agent.service\n',
    };
    // The root is not this process's: a service user cannot write it (as root it would come
    // first, so here it offers nothing).
    writeFileSync(join(root, 'cgroup.controllers'), '');
    const confinement = confineResources('runner-agent-x', LIMITS, host);
    expect(confinement.kind).toBe('cgroup v2');
    expect(confinement.cgroups).toEqual([join(service, 'runner-agent-x')]);
    expect(read(join(service, 'runner-leaf', 'cgroup.procs'))).toBe('4242');
    expect(read(join(service, 'cgroup.subtree_control'))).toBe('+memory +cpu');
    expect(read(join(service, 'runner-agent-x', 'memory.max'))).toBe(String(256 * MIB));
  });

  it('falls back to each command’s own limits where cgroup2 offers no controller (v2 and v1 both absent)', () => {
    const root = cgroupDir(mkdtempSync(join(tmpdir(), 'runner-cg2-')), '');
    const host: CgroupHost = { v2Root: root, v1Dir: '/nonexistent', selfCgroup: '0::/\n' };
    const confinement = confineResources('runner-x', { ...LIMITS, fileBytes: MIB }, host);
    expect(confinement.kind).toBe('rlimit');
    expect(confinement.cgroups).toEqual([]);
    const why = 'no cgroup: cgroup2 offers no memory or cpu controller here; v1:';
    expect(confinement.lines).toEqual([
      `memory: each command's address space limited to ${256 * MIB} bytes (RLIMIT_AS, not the tasks together; ${why} no memory hierarchy)`,
      `cpu: not throttled (${why} no cpu hierarchy; a CPU-time limit would kill, not throttle), commands run at nice 10`,
      `disk: each file a command writes limited to ${MIB} bytes (RLIMIT_FSIZE)`,
    ]);
  });
});

describe('a confined command', () => {
  it('starts with its resource limits and at nice 10, as the same process (exec), and unchanged without limits', async () => {
    const confinement = confineResources(
      'runner-x',
      { ...LIMITS, enforcement: 'rlimit', fileBytes: 4 * MIB },
      { v1Dir: '/nonexistent', selfCgroup: '' },
    );
    const { file, args } = confinedCommand(
      '/bin/cat',
      ['/proc/self/limits', '/proc/self/stat'],
      confinement.commandSetting(true),
    );
    const { stdout } = await run(file, args);
    expect(stdout).toMatch(new RegExp(`^Max address space\\s+${256 * MIB}\\s+${256 * MIB}\\s+bytes`, 'm'));
    expect(stdout).toMatch(new RegExp(`^Max file size\\s+${4 * MIB}\\s+${4 * MIB}\\s+bytes`, 'm'));
    // /proc/<pid>/stat: the 19th field is the nice value (the name, 2nd, has no space here); nice
    // adds to this process's own, up to 19.
    expect(stdout.trim().split('\n').pop()?.split(' ')[18]).toBe(String(Math.min(19, getPriority() + 10)));
    expect(confinedCommand('/bin/cat', ['x'], undefined)).toEqual({ file: '/bin/cat', args: ['x'] });
  });

  it('writes its own pid into each cgroup before it runs, and is refused (126, saying why) when it cannot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-join-'));
    const setting = JSON.stringify({ join: [dir] });
    const { file, args } = confinedCommand('/bin/sh', ['-c', 'echo $$'], setting);
    const { stdout } = await run(file, args);
    expect(read(join(dir, 'cgroup.procs')).trim()).toBe(stdout.trim());
    const refused = confinedCommand('/bin/true', [], JSON.stringify({ join: [join(dir, 'gone')] }));
    const failure = await run(refused.file, refused.args).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({
      code: 126,
      stderr: expect.stringContaining(`runner: cannot put the command in ${join(dir, 'gone')}`),
    });
  });
});
