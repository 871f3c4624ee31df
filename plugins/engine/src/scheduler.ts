/**
 * Decides what runs when. Knows nothing of Lua, templates or the store: it is handed the tasks in
 * dependency order, a way to expand a ready task into execution units (loop items x agents) and a
 * way to run a unit. Keeping it pure makes the ordering rules testable on their own:
 *
 * - a task starts once every task it depends on finished successfully (or failed with
 *   ignore_errors); with `parallel: 1` units run one at a time in file order;
 * - at most `parallel` units run at once, loop iterations and agents included;
 * - a unit that fails (without ignore_errors) stops the run: running units finish, nothing new
 *   starts, and every task not run is reported skipped with the reason.
 */

export type UnitStatus = 'succeeded' | 'failed' | 'skipped' | 'ignored';
export type TaskOutcome = UnitStatus;

export interface SchedulableTask {
  name: string;
  dependsOn: readonly string[];
  ignoreErrors: boolean;
}

export interface UnitResult {
  status: UnitStatus;
  message?: string;
}

export interface SchedulerHooks<T extends SchedulableTask, U> {
  /** Units of a task whose dependencies are done; a throw fails the task with that message. */
  expand(task: T): Promise<U[]> | U[];
  run(unit: U, task: T): Promise<UnitResult>;
  /** A task that will not run, with why (dependency failed, run stopped, no units). */
  skipped(task: T, reason: string): void;
  /**
   * A task failed before any of its units started: its expansion threw (a loop or delegate_to
   * template that does not render, an unknown agent). Without this the failure would leave no trace
   * but the run's error.
   */
  expandFailed?(task: T, message: string): void;
  /** Units of a started task (loop items) that will not run because the run stopped. */
  dropped?(unit: U, task: T, reason: string): void;
  /** Every unit of the task has ended. */
  taskFinished(task: T, outcome: TaskOutcome): void;
}

export interface ScheduleResult {
  outcomes: Map<string, TaskOutcome>;
  /** Name of the task whose failure stopped the run. */
  stoppedBy?: string;
}

interface TaskState<U> {
  phase: 'waiting' | 'expanding' | 'running' | 'done';
  queue: U[];
  running: number;
  results: UnitResult[];
}

export async function schedule<T extends SchedulableTask, U>(
  tasks: readonly T[],
  parallel: number,
  hooks: SchedulerHooks<T, U>,
  signal?: AbortSignal,
): Promise<ScheduleResult> {
  const state = new Map<string, TaskState<U>>(
    tasks.map((t) => [t.name, { phase: 'waiting', queue: [], running: 0, results: [] }]),
  );
  const outcomes = new Map<string, TaskOutcome>();
  // Tasks skipped because something failed or the run stopped: their dependents are skipped too,
  // unlike dependents of a task skipped by its own `when`.
  const blockedByFailure = new Set<string>();
  // skipBlocked finds work only after a task failed or was blocked; until then its pass over every
  // task is skipped (run at every completion, it made a long run quadratic).
  let blockCheckNeeded = false;
  // Every task before this index is done; the start loop begins here (from the first task it only
  // stepped over them: the same again, quadratic over a long run).
  let firstOpen = 0;
  let stoppedBy: string | undefined;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const notify = () => wake?.();
  signal?.addEventListener('abort', notify, { once: true });

  const finishTask = (task: T, outcome: TaskOutcome) => {
    const s = state.get(task.name) as TaskState<U>;
    s.phase = 'done';
    outcomes.set(task.name, outcome);
    if (outcome === 'failed') {
      stoppedBy ??= task.name;
      blockCheckNeeded = true;
    }
    hooks.taskFinished(task, outcome);
  };

  const settleIfComplete = (task: T) => {
    const s = state.get(task.name) as TaskState<U>;
    if (s.phase !== 'running' || s.running > 0 || s.queue.length > 0) return;
    const failed = s.results.some((r) => r.status === 'failed');
    const ignored = s.results.some((r) => r.status === 'ignored');
    const allSkipped = s.results.every((r) => r.status === 'skipped');
    finishTask(task, failed ? 'failed' : ignored ? 'ignored' : allSkipped ? 'skipped' : 'succeeded');
  };

  const startUnit = (task: T, unit: U) => {
    const s = state.get(task.name) as TaskState<U>;
    s.running++;
    inFlight++;
    hooks
      .run(unit, task)
      .catch((error: unknown): UnitResult => ({
        status: 'failed',
        message: error instanceof Error ? error.message : String(error),
      }))
      .then((result) => {
        const status = result.status === 'failed' && task.ignoreErrors ? 'ignored' : result.status;
        s.results.push({ ...result, status });
        s.running--;
        inFlight--;
        settleIfComplete(task);
        notify();
      });
  };

  const stopped = () => stoppedBy !== undefined || signal?.aborted === true;

  // Tasks whose dependencies can no longer succeed are settled first, whatever the capacity. Tasks
  // are in dependency order, so one pass also settles dependents of dependents.
  const skipBlocked = () => {
    if (!blockCheckNeeded) return;
    blockCheckNeeded = false;
    for (const task of tasks) {
      const s = state.get(task.name) as TaskState<U>;
      if (s.phase !== 'waiting') continue;
      const blocker = task.dependsOn.find((d) => outcomes.get(d) === 'failed' || blockedByFailure.has(d));
      if (blocker) {
        blockedByFailure.add(task.name);
        // A dependent earlier in the list (tasks not in dependency order) is caught by the next pass.
        blockCheckNeeded = true;
        s.phase = 'done';
        outcomes.set(task.name, 'skipped');
        // A task the cancellation stopped failed because of it: its dependents say the run was cancelled.
        hooks.skipped(
          task,
          signal?.aborted
            ? 'not run: the run was cancelled'
            : `not run: it depends on ${blocker}, which ${outcomes.get(blocker) === 'failed' ? 'failed' : 'was not run'}`,
        );
      }
    }
  };

  for (;;) {
    skipBlocked();

    if (!stopped()) {
      while (firstOpen < tasks.length && (state.get(tasks[firstOpen].name) as TaskState<U>).phase === 'done')
        firstOpen++;
      for (let i = firstOpen; i < tasks.length; i++) {
        const task = tasks[i];
        if (inFlight >= parallel) break;
        const s = state.get(task.name) as TaskState<U>;
        if (s.phase === 'waiting' && task.dependsOn.every((d) => state.get(d)?.phase === 'done')) {
          s.phase = 'expanding';
          try {
            s.queue = [...(await hooks.expand(task))];
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            s.results.push({ status: 'failed', message });
            hooks.expandFailed?.(task, message);
          }
          s.phase = 'running';
          if (s.queue.length === 0) {
            if (s.results.length === 0) {
              // An empty loop (or no agent chosen): skipped like a false `when`, and recorded.
              const reason = 'not run: no loop item or agent to run it for';
              s.results.push({ status: 'skipped', message: reason });
              hooks.skipped(task, reason);
            }
            const failed = s.results.some((r) => r.status === 'failed');
            finishTask(task, failed ? (task.ignoreErrors ? 'ignored' : 'failed') : 'skipped');
            if (stopped()) break;
            continue;
          }
        }
        while (s.phase === 'running' && s.queue.length > 0 && inFlight < parallel && !stopped()) {
          startUnit(task, s.queue.shift() as U);
        }
        // With parallel 1 a later task must not start before an earlier one finished: file order.
        if (parallel === 1 && s.phase !== 'done' && s.phase !== 'waiting') break;
      }
    }

    if (inFlight === 0) {
      const unfinished = tasks.filter((t) => state.get(t.name)?.phase !== 'done');
      if (unfinished.length === 0) break;
      if (stopped() || !unfinished.some((t) => t.dependsOn.every((d) => state.get(d)?.phase === 'done'))) {
        // A dependent of the task that failed says so, rather than that the run stopped.
        skipBlocked();
        const reason = signal?.aborted
          ? 'not run: the run was cancelled'
          : `not run: the run stopped after ${stoppedBy} failed`;
        for (const task of unfinished) {
          const s = state.get(task.name) as TaskState<U>;
          if (s.phase === 'done') continue;
          if (s.phase === 'running' && s.results.length > 0) {
            // Some units ran before the stop; the rest are dropped, each reported (per-item records).
            for (const unit of s.queue) hooks.dropped?.(unit, task, reason);
            s.queue = [];
            settleIfComplete(task);
            continue;
          }
          s.phase = 'done';
          outcomes.set(task.name, 'skipped');
          blockedByFailure.add(task.name);
          blockCheckNeeded = true;
          hooks.skipped(task, reason);
        }
        break;
      }
      continue;
    }
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  signal?.removeEventListener('abort', notify);
  return { outcomes, stoppedBy };
}
