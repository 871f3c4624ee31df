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
import { join } from 'node:path';

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
    // Only executors' cgroups (runner-<mark>): an agent's task cgroup (runner-agent-<mark>) is
    // empty between commands and must stay, with its limits.
    if (!/^runner-[0-9a-f]{16}$/.test(name) || dir === own) continue;
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

/** Kills every process in a cgroup but this one and `spare`: those an earlier master or agent left; how many there were. */
export function killCgroup(cgroup: string, spare: readonly number[] = []): number {
  let pids: number[];
  try {
    pids = readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      if (pid !== process.pid && !spare.includes(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return pids.length;
}
