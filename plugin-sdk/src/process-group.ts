import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Stopping what a command started. Commands are spawned `detached`, which makes each the leader
 * of a process group of its own; signalling the group (a negative pid) reaches the shell and
 * everything it started (`sh -c "a | b"`, `sleep` under a script), which killing the child alone
 * would leave running with the pipes open.
 */

/** Milliseconds between SIGTERM and SIGKILL when a group is stopped. */
export const PROCESS_GROUP_GRACE_MS = 2_000;

/** Sends `signal` to the group led by `pid`; false when no process of it is left. */
export function signalProcessGroup(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined || pid <= 0) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    // ESRCH: the group is gone. EPERM cannot happen for our own children.
    return false;
  }
}

/**
 * SIGTERM to the group now, SIGKILL to what is left of it after `graceMs`. Does not depend on the
 * leader: a member that ignores SIGTERM is killed even when the leader exited at once. The check
 * for survivors is cheap and stops as soon as the group is gone, so a CLI that cancelled its run
 * exits without waiting out the grace.
 */
export function stopProcessGroup(pid: number | undefined, graceMs = PROCESS_GROUP_GRACE_MS): void {
  if (!signalProcessGroup(pid, 'SIGTERM')) return;
  const deadline = performance.now() + graceMs;
  const check = setInterval(
    () => {
      if (!signalProcessGroup(pid, 0)) clearInterval(check);
      else if (performance.now() >= deadline) {
        signalProcessGroup(pid, 'SIGKILL');
        clearInterval(check);
      }
    },
    Math.min(50, graceMs),
  );
}

/**
 * The variable that marks a process as started by one master's executor. Not `RUNNER_*`: those
 * are left out of what commands get (module-exec's childEnvironment), and this one must reach them.
 */
export const OWNER_VARIABLE = 'EXECUTOR_OF_RUNNER';

/**
 * A process's owner mark: a digest of its data directory (a master's, an agent's), so owners
 * sharing a user tell their processes apart.
 */
export function ownerMark(dataDir: string): string {
  return createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
}

/**
 * Kills every process of `uid` (but this one) that carries `owner`'s mark in its environment: at
 * the start of a master or an agent, what still runs with its mark was started for an earlier
 * one's runs (a master's executor and its commands, an agent's commands), also commands that left
 * their process group or session. Owners sharing the user have marks of their own. A command that
 * clears its environment (`env -i`) carries no mark and is not found here: ownerCgroup finds
 * those where the master may make a cgroup. Needs /proc (Linux).
 */
export function killMarkedProcesses(uid: number, owner: string): number {
  const mark = `${OWNER_VARIABLE}=${owner}`;
  let killed = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'));
      if (!uids || (Number(uids[1]) !== uid && Number(uids[2]) !== uid)) continue;
      if (!readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(mark)) continue;
      if (Number(name) === process.pid) continue;
      process.kill(Number(name), 'SIGKILL');
      killed++;
    } catch {
      // Gone meanwhile.
    }
  }
  return killed;
}

/**
 * A cgroup (v2: the unified hierarchy, alone or beside v1's) of its own for `owner`'s executor,
 * made if missing; undefined where the process may not make one (not root, no cgroup2 mount).
 * Every process the executor starts is in it, and an unprivileged user cannot leave it, so it
 * finds also what cleared its environment (`env -i`) and lost the mark.
 */
export function ownerCgroup(owner: string): string | undefined {
  for (const root of ['/sys/fs/cgroup/unified', '/sys/fs/cgroup']) {
    if (!existsSync(join(root, 'cgroup.procs')) || !existsSync(join(root, 'cgroup.controllers'))) continue;
    const dir = join(root, `runner-${owner}`);
    try {
      removeEmptySiblings(root, dir);
      mkdirSync(dir, { recursive: true });
      accessSync(join(dir, 'cgroup.procs'), constants.W_OK);
      return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Removes the empty `runner-*` cgroups masters killed with SIGKILL left (their executors ended
 * with them): the kernel refuses to remove one that holds a process or a child.
 */
function removeEmptySiblings(root: string, own: string): void {
  for (const name of readdirSync(root)) {
    const dir = join(root, name);
    if (!name.startsWith('runner-') || dir === own) continue;
    try {
      if (readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() === '') rmdirSync(dir);
    } catch {
      // In use, or gone meanwhile.
    }
  }
}

/** Moves a process into a cgroup (ownerCgroup's); false when it could not. */
export function joinCgroup(cgroup: string, pid: number): boolean {
  try {
    // Made again if another master's start removed it while it was empty.
    mkdirSync(cgroup, { recursive: true });
    writeFileSync(join(cgroup, 'cgroup.procs'), String(pid));
    return true;
  } catch {
    return false;
  }
}

/** Kills every process in a cgroup: the ones an earlier master's executor left; how many there were. */
export function killCgroup(cgroup: string): number {
  let pids: number[];
  try {
    pids = readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      if (pid !== process.pid) process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return pids.length;
}

/** What the commands of one owner may use together (resources.cpu.limit, resources.memory.limit). */
export interface ResourceLimits {
  /** Cores (0.5: half of one). */
  cpuCores?: number;
  memoryBytes?: number;
}

/**
 * Puts `pid` (an executor, before it starts anything) under `limits` with cgroups: the v2
 * controllers where the unified hierarchy delegates them, else the v1 `memory` and `cpu`
 * hierarchies (a cgroup `runner-<owner>` under this process's own). Returns one line per limit
 * saying how it is enforced, or why it is not (not root, no such controller).
 */
export function limitResources(owner: string, pid: number, limits: ResourceLimits): string[] {
  const said: string[] = [];
  if (limits.memoryBytes) {
    const bytes = String(Math.floor(limits.memoryBytes));
    said.push(
      applyLimit(owner, pid, 'memory', [
        { v2: 'memory.max', value: bytes },
        { v1: 'memory.limit_in_bytes', value: bytes },
      ]),
    );
  }
  if (limits.cpuCores) {
    const quota = String(Math.max(1000, Math.round(limits.cpuCores * 100_000)));
    said.push(
      applyLimit(owner, pid, 'cpu', [
        { v2: 'cpu.max', value: `${quota} 100000` },
        { v1: 'cpu.cfs_period_us', value: '100000' },
        { v1: 'cpu.cfs_quota_us', value: quota },
      ]),
    );
  }
  return said;
}

type LimitFile = { v2: string; value: string; v1?: undefined } | { v1: string; value: string; v2?: undefined };

function applyLimit(owner: string, pid: number, controller: 'memory' | 'cpu', files: LimitFile[]): string {
  const v2 = ownerCgroup(owner);
  const delegated =
    v2 &&
    readIfAny(join(dirname(v2), 'cgroup.subtree_control'))
      .split(/\s+/)
      .includes(controller);
  const v1 = v1Cgroup(controller, owner);
  const [dir, chosen] = delegated
    ? [v2, files.filter((f) => f.v2)]
    : v1
      ? [v1, files.filter((f) => f.v1)]
      : [undefined, []];
  if (!dir) return `${controller}: not limited (no cgroup ${controller} controller this process may use)`;
  try {
    mkdirSync(dir, { recursive: true });
    for (const file of chosen) writeFileSync(join(dir, (file.v2 ?? file.v1) as string), file.value);
    writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    return `${controller}: limited by ${dir} (${chosen.map((f) => `${f.v2 ?? f.v1}=${f.value}`).join(', ')})`;
  } catch (error) {
    return `${controller}: not limited (${dir}: ${(error as Error).message})`;
  }
}

/** `runner-<owner>` under this process's own cgroup of a v1 hierarchy, if that hierarchy is mounted. */
function v1Cgroup(controller: 'memory' | 'cpu', owner: string): string | undefined {
  const root = `/sys/fs/cgroup/${controller}`;
  if (!existsSync(join(root, 'cgroup.procs'))) return undefined;
  for (const [, names, path] of readIfAny('/proc/self/cgroup').matchAll(/^\d+:([^:]*):(.*)$/gm))
    if (names.split(',').includes(controller)) return join(root, path, `runner-${owner}`);
  return undefined;
}

/** Removes the (empty) v1 cgroups limitResources made for `owner`, once its executor ended. */
export function removeLimitCgroups(owner: string): void {
  for (const controller of ['memory', 'cpu'] as const) {
    const dir = v1Cgroup(controller, owner);
    try {
      if (dir && existsSync(dir)) rmdirSync(dir);
    } catch {
      // Still in use (a command left running): the next start's sweep ends it.
    }
  }
}

function readIfAny(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
