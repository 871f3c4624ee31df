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
