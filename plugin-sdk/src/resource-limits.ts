import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigDeclaration, RunnerConfig } from './config.js';
import { RunnerError } from './errors.js';

/**
 * What tasks may use of the host they run on (service.md section 8, `resources.*`): one
 * implementation for the master's local tasks and an agent's delegated ones. CPU and memory are
 * held by a cgroup where the host gives this process one (v2 where its controllers are offered,
 * v1 otherwise), else by each command's own limits (RLIMIT_AS); the largest file a command may
 * write by RLIMIT_FSIZE; free disk space is checked before a task starts.
 */

/** Declared by the kernel (CORE_CONFIG): the master and the agent both read them. */
export const RESOURCES_CONFIG: ConfigDeclaration = {
  'resources.cpu.limit': {
    schema: { type: 'number', minimum: 0 },
    default: 0,
    help: "cores this host's tasks may use together (a cgroup's CPU quota: throttled past it); without a cgroup CPU is not throttled and commands run at nice 10; 0: no limit",
  },
  'resources.cpu.reserve': {
    schema: { type: 'number', minimum: 0 },
    default: 0,
    help: "cores kept for the host's own work: an agent reports its CPU capacity (cores, usage) without them",
  },
  'resources.memory.limit': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    help: "MiB this host's tasks may use together (a cgroup's memory limit: past it the kernel kills the largest); without a cgroup, each command's address space (RLIMIT_AS); 0: no limit",
  },
  'resources.memory.reserve': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    help: "MiB kept for the host's own work: an agent reports its memory capacity (total, used) without them",
  },
  'resources.disk.limit': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    help: "MiB the largest file a task's command may write (RLIMIT_FSIZE: the write past it fails); not a quota over all files; 0: no limit",
  },
  'resources.disk.min_free': {
    schema: { type: 'integer', minimum: 0 },
    default: 0,
    help: "MiB that must stay free on the data directory's file system: below it tasks with side effects are refused, saying so (0: no check)",
  },
  'resources.enforcement': {
    schema: { type: 'string', enum: ['auto', 'rlimit'] },
    default: 'auto',
    help: "how the CPU and memory limits are held: 'auto' (a cgroup, v2 or v1, where this process may make one; else each command's resource limits) or 'rlimit' (resource limits of each command, never a cgroup)",
  },
};

const MIB = 1024 * 1024;

export interface ResourceSettings {
  /** Cores (0.5: half of one); 0: none. */
  cpuCores: number;
  cpuReserve: number;
  memoryBytes: number;
  memoryReserveBytes: number;
  /** RLIMIT_FSIZE of each command. */
  fileBytes: number;
  minFreeBytes: number;
  enforcement: 'auto' | 'rlimit';
}

export function readResourceSettings(config: Pick<RunnerConfig, 'get'>): ResourceSettings {
  return {
    cpuCores: config.get<number>('resources.cpu.limit', 0),
    cpuReserve: config.get<number>('resources.cpu.reserve', 0),
    memoryBytes: config.get<number>('resources.memory.limit', 0) * MIB,
    memoryReserveBytes: config.get<number>('resources.memory.reserve', 0) * MIB,
    fileBytes: config.get<number>('resources.disk.limit', 0) * MIB,
    minFreeBytes: config.get<number>('resources.disk.min_free', 0) * MIB,
    enforcement: config.get<'auto' | 'rlimit'>('resources.enforcement', 'auto'),
  };
}

/** Refuses a task while the file system of `path` has less free space than resources.disk.min_free. */
export async function checkFreeSpace(path: string, minFreeBytes: number): Promise<void> {
  if (!minFreeBytes) return;
  const { bavail, bsize } = await statfs(path);
  const free = bavail * bsize;
  if (free >= minFreeBytes) return;
  const mib = (bytes: number) => `${Math.floor(bytes / MIB)} MiB`;
  throw new RunnerError(
    'insufficient_storage',
    `refused: ${mib(free)} free on the file system of ${path}, under resources.disk.min_free (${mib(minFreeBytes)}); free space or lower the setting`,
    { status: 507 },
  );
}

/** Where the cgroup file systems are: the system's, or a test's tree laid out like one. */
export interface CgroupHost {
  /** The unified (v2) hierarchy's root, if mounted. */
  v2Root?: string;
  /** The directory holding the v1 hierarchies (`memory`, `cpu`). */
  v1Dir: string;
  /** This process's `/proc/self/cgroup`. */
  selfCgroup: string;
}

export function systemCgroupHost(): CgroupHost {
  const v2Root = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((root) =>
    existsSync(join(root, 'cgroup.controllers')),
  );
  return { v2Root, v1Dir: '/sys/fs/cgroup', selfCgroup: readIfAny('/proc/self/cgroup') };
}

export type EnforcementKind = 'cgroup v2' | 'cgroup v1' | 'rlimit' | 'none';

/** The limits of one owner's tasks as they are held on this host. */
export interface Confinement {
  /** What holds CPU and memory (`none`: neither is limited). */
  readonly kind: EnforcementKind;
  /** One line per limit: how it is held, or why it is not. */
  readonly lines: readonly string[];
  /** The cgroups a process must be in for the limits to hold. */
  readonly cgroups: readonly string[];
  /**
   * The value of CONFINEMENT_VARIABLE for the process that starts the tasks' commands: what each
   * command does as it starts (join the cgroups when `join`, take its resource limits); undefined
   * when there is nothing to do.
   */
  commandSetting(join: boolean): string | undefined;
  /** Puts a process (one started before it starts anything) in the cgroups; false if it could not. */
  enter(pid: number): boolean;
  /** Removes the cgroups once empty (one still in use stays). */
  release(): void;
}

/**
 * Read by confinedCommand in whatever thread or process starts a command (Lua workers copy the
 * environment). `RUNNER_*`: commands never get it (module-exec's childEnvironment), and the kernel
 * does not read it as config.
 */
export const CONFINEMENT_VARIABLE = 'RUNNER_COMMAND_CONFINEMENT';

/** What confinedCommand does to each command (CONFINEMENT_VARIABLE, JSON). */
interface CommandConfinement {
  join?: string[];
  prlimit?: string;
  as?: number;
  fsize?: number;
  nice?: string;
}

/**
 * Makes the cgroup `name` (under the unified hierarchy, or under this process's own v1 cgroups)
 * holding `settings`' CPU and memory limits, or falls back to each command's resource limits.
 */
export function confineResources(
  name: string,
  settings: Pick<ResourceSettings, 'cpuCores' | 'memoryBytes' | 'fileBytes' | 'enforcement'>,
  host: CgroupHost = systemCgroupHost(),
  /** Only say what would hold the limits (`runner doctor`): make and write nothing. */
  probe = false,
): Confinement {
  const wanted = controllerLimits(settings);
  const lines: string[] = [];
  const command: CommandConfinement = {};
  let kind: EnforcementKind = 'none';
  let cgroups: string[] = [];
  // The limits no cgroup holds, with why.
  let rest = wanted.map((limit) => ({ limit, why: "resources.enforcement is 'rlimit'" }));
  if (wanted.length && settings.enforcement === 'auto') {
    const v2 = cgroupV2(name, wanted, host, probe);
    if (typeof v2 === 'string') {
      cgroups = [v2];
      kind = 'cgroup v2';
      rest = [];
      for (const limit of wanted) lines.push(`${limit.controller}: limited by ${v2} (${limit.v2}=${limit.v2Value})`);
    } else {
      rest = [];
      for (const limit of wanted) {
        const v1 = cgroupV1(name, limit, host, probe);
        if (v1.dir) {
          cgroups.push(v1.dir);
          kind = 'cgroup v1';
          lines.push(`${limit.controller}: limited by ${v1.dir} (${limit.v1.map(([f, v]) => `${f}=${v}`).join(', ')})`);
        } else rest.push({ limit, why: `no cgroup: ${v2.why}; v1: ${v1.why}` });
      }
    }
  }
  const prlimit = findProgram('prlimit');
  for (const { limit, why } of rest) {
    if (limit.controller === 'memory') {
      if (prlimit) command.as = settings.memoryBytes;
      lines.push(
        prlimit
          ? `memory: each command's address space limited to ${settings.memoryBytes} bytes (RLIMIT_AS, not the tasks together; ${why})`
          : `memory: not limited (${why}; no prlimit command for RLIMIT_AS)`,
      );
    } else {
      command.nice = findProgram('nice');
      lines.push(
        `cpu: not throttled (${why}; a CPU-time limit would kill, not throttle)${command.nice ? ', commands run at nice 10' : ''}`,
      );
    }
    if (kind === 'none') kind = 'rlimit';
  }
  if (settings.fileBytes) {
    if (prlimit) command.fsize = settings.fileBytes;
    lines.push(
      prlimit
        ? `disk: each file a command writes limited to ${settings.fileBytes} bytes (RLIMIT_FSIZE)`
        : 'disk: file size not limited (no prlimit command)',
    );
  }
  if (command.as || command.fsize) command.prlimit = prlimit;
  return {
    kind,
    lines,
    cgroups,
    commandSetting(join) {
      const setting: CommandConfinement = join && cgroups.length ? { ...command, join: cgroups } : command;
      return Object.keys(setting).length ? JSON.stringify(setting) : undefined;
    },
    enter(pid) {
      try {
        for (const dir of cgroups) writeFileSync(join(dir, 'cgroup.procs'), String(pid));
        return true;
      } catch {
        return false;
      }
    },
    release() {
      for (const dir of cgroups) {
        try {
          rmdirSync(dir);
        } catch {
          // Still in use (a command left running): the next start's sweep ends it.
        }
      }
    },
  };
}

interface ControllerLimit {
  controller: 'memory' | 'cpu';
  v2: string;
  v2Value: string;
  v1: [string, string][];
}

function controllerLimits(settings: Pick<ResourceSettings, 'cpuCores' | 'memoryBytes'>): ControllerLimit[] {
  const limits: ControllerLimit[] = [];
  if (settings.memoryBytes) {
    const bytes = String(Math.floor(settings.memoryBytes));
    limits.push({ controller: 'memory', v2: 'memory.max', v2Value: bytes, v1: [['memory.limit_in_bytes', bytes]] });
  }
  if (settings.cpuCores) {
    const quota = String(Math.max(1000, Math.round(settings.cpuCores * 100_000)));
    limits.push({
      controller: 'cpu',
      v2: 'cpu.max',
      v2Value: `${quota} 100000`,
      v1: [
        ['cpu.cfs_period_us', '100000'],
        ['cpu.cfs_quota_us', quota],
      ],
    });
  }
  return limits;
}

/**
 * A v2 cgroup with the limits: at the root of the unified hierarchy (root, its controllers
 * enabled there), or in the subtree delegated to this process (systemd `Delegate=yes`: its own
 * cgroup writable), whose processes then move to a leaf of their own, since a cgroup that passes
 * controllers to its children may hold no process.
 */
function cgroupV2(name: string, limits: ControllerLimit[], host: CgroupHost, probe: boolean): string | { why: string } {
  const { v2Root } = host;
  if (!v2Root) return { why: 'no cgroup2 mount' };
  const needed = limits.map((l) => l.controller);
  const own = /^0::(.*)$/m.exec(host.selfCgroup)?.[1];
  const parents = [v2Root, ...(own && own !== '/' ? [join(v2Root, own)] : [])];
  let why = `cgroup2 offers no ${needed.join(' or ')} controller here`;
  for (const parent of parents) {
    if (!needed.every((c) => words(join(parent, 'cgroup.controllers')).includes(c))) continue;
    if (!writable(join(parent, 'cgroup.subtree_control'))) {
      why = `${parent} is not delegated to this process`;
      continue;
    }
    if (probe) return join(parent, name);
    try {
      enableControllers(parent, needed, parent !== v2Root);
      const dir = join(parent, name);
      mkdirSync(dir, { recursive: true });
      for (const limit of limits) writeFileSync(join(dir, limit.v2), limit.v2Value);
      return dir;
    } catch (error) {
      why = `${parent}: ${(error as Error).message}`;
    }
  }
  return { why };
}

/** Enables `controllers` for the children of `parent`, first moving its processes to a leaf when it is not the root. */
function enableControllers(parent: string, controllers: string[], moveProcesses: boolean): void {
  const enabled = words(join(parent, 'cgroup.subtree_control'));
  const missing = controllers.filter((c) => !enabled.includes(c));
  if (!missing.length) return;
  if (moveProcesses) {
    const leaf = join(parent, 'runner-leaf');
    mkdirSync(leaf, { recursive: true });
    for (const pid of words(join(parent, 'cgroup.procs'))) writeFileSync(join(leaf, 'cgroup.procs'), pid);
  }
  writeFileSync(join(parent, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
}

/** `name` under this process's own cgroup of the v1 hierarchy of `limit`'s controller, with the limit written. */
function cgroupV1(
  name: string,
  limit: ControllerLimit,
  host: CgroupHost,
  probe: boolean,
): { dir?: string; why: string } {
  const root = join(host.v1Dir, limit.controller);
  if (!existsSync(join(root, 'cgroup.procs'))) return { why: `no ${limit.controller} hierarchy` };
  const own = [...host.selfCgroup.matchAll(/^\d+:([^:]*):(.*)$/gm)].find(([, names]) =>
    names.split(',').includes(limit.controller),
  )?.[2];
  if (own === undefined) return { why: `this process is in no ${limit.controller} cgroup` };
  const dir = join(root, own, name);
  if (probe) return writable(join(root, own)) ? { dir, why: '' } : { why: `${join(root, own)} is not writable` };
  try {
    mkdirSync(dir, { recursive: true });
    for (const [file, value] of limit.v1) writeFileSync(join(dir, file), value);
    return { dir, why: '' };
  } catch (error) {
    return { why: `${dir}: ${(error as Error).message}` };
  }
}

const parsedSettings = new Map<string, CommandConfinement>();

/**
 * The command to start in place of `file args`, so it starts under its owner's limits
 * (CONFINEMENT_VARIABLE): in the cgroups before it runs anything (a shell writes itself there,
 * then execs), with its resource limits (prlimit), at a lower priority (nice). Unchanged when
 * there are no limits, so the default costs nothing.
 */
export function confinedCommand(
  file: string,
  args: readonly string[],
  setting: string | undefined = process.env[CONFINEMENT_VARIABLE],
): { file: string; args: string[] } {
  if (!setting) return { file, args: [...args] };
  let confinement = parsedSettings.get(setting);
  if (!confinement) parsedSettings.set(setting, (confinement = JSON.parse(setting) as CommandConfinement));
  let argv = [file, ...args];
  if (confinement.nice) argv = [confinement.nice, '-n', '10', ...argv];
  if (confinement.prlimit) {
    const limits = [
      ...(confinement.as ? [`--as=${confinement.as}`] : []),
      ...(confinement.fsize ? [`--fsize=${confinement.fsize}`] : []),
    ];
    argv = [confinement.prlimit, ...limits, '--', ...argv];
  }
  if (confinement.join?.length) {
    const joins = confinement.join.map(
      (dir) =>
        `echo $$ > ${quote(join(dir, 'cgroup.procs'))} || { echo ${quote(`runner: cannot put the command in ${dir} (resources.*)`)} >&2; exit 126; }`,
    );
    argv = ['/bin/sh', '-c', `${joins.join('; ')}; exec "$@"`, 'sh', ...argv];
  }
  return { file: argv[0], args: argv.slice(1) };
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A program's absolute path in PATH (or the usual system directories), if any. */
function findProgram(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function words(file: string): string[] {
  return readIfAny(file).split(/\s+/).filter(Boolean);
}

function readIfAny(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
