/**
 * Decides what runs when. Knows nothing of Lua, templates or the store: it is handed the tasks in
 * dependency order, a way to expand a ready task into execution units (loop items x agents) and a
 * way to run a unit. Keeping it pure makes the ordering rules testable on their own:
 *
 * - a task starts once every task it depends on finished successfully (or failed with
 *   ignore_errors); with `parallel: 1` units run one at a time in file order;
 * - at most `parallel` slots are taken at once: a slot is a unit, or a fan-out (the units of one
 *   task and loop item on several agents, which run together on their agents, as Ansible runs a
 *   task on its hosts);
 * - at most `forks` delegated units run at once across the run, whatever `parallel` allows;
 * - a unit that fails (without ignore_errors) stops the run: running units finish, nothing new
 *   starts, and every task not run is reported skipped with the reason.
 */

export type UnitStatus = 'succeeded' | 'failed' | 'skipped' | 'ignored';
export type TaskOutcome = UnitStatus;

export interface DispatchableTask {
  name: string;
  dependsOn: readonly string[];
  ignoreErrors: boolean;
}

export interface UnitResult {
  status: UnitStatus;
  message?: string;
}

/** How much runs at once: `parallel` slots (units or fan-outs), of which `forks` delegated units. */
export interface DispatchLimits {
  parallel: number;
  /** Default: unbounded (only `parallel` limits). */
  forks?: number;
}

export interface DispatchCallbacks<T extends DispatchableTask, U> {
  /** Units of a task whose dependencies are done; a throw fails the task with that message. */
  expand(task: T): Promise<U[]> | U[];
  /**
   * The fan-out a delegated unit belongs to; undefined for a local unit. Adjacent units of a task
   * with the same key take one `parallel` slot together; each unit with a key takes one of `forks`.
   * Without this callback every unit is local (one slot, no fork).
   */
  fanOut?(unit: U): string | undefined;
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

export interface DispatchResult {
  outcomes: Map<string, TaskOutcome>;
  /** Name of the task whose failure stopped the run. */
  stoppedBy?: string;
}

interface TaskState<U> {
  phase: 'waiting' | 'expanding' | 'running' | 'done';
  /** Slots not started yet: each a unit or a fan-out of units. */
  queue: U[][];
  /** Slots started and not ended. */
  running: number;
  results: UnitResult[];
}

/** A started slot: its units not started yet (waiting for a fork) and those running. */
interface Slot<T, U> {
  task: T;
  pending: U[];
  running: number;
  forked: boolean;
}

/** Adjacent units with the same fan-out key form one slot; local units are a slot each. */
function slotsOf<U>(units: readonly U[], fanOut?: (unit: U) => string | undefined): U[][] {
  if (!fanOut) return units.map((u) => [u]);
  const slots: U[][] = [];
  let lastKey: string | undefined;
  for (const unit of units) {
    const key = fanOut(unit);
    if (key !== undefined && key === lastKey) slots[slots.length - 1].push(unit);
    else slots.push([unit]);
    lastKey = key;
  }
  return slots;
}

export async function dispatchTasks<T extends DispatchableTask, U>(
  tasks: readonly T[],
  limits: number | DispatchLimits,
  callbacks: DispatchCallbacks<T, U>,
  signal?: AbortSignal,
): Promise<DispatchResult> {
  const { parallel, forks = Infinity } = typeof limits === 'number' ? { parallel: limits } : limits;
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
  let forksInFlight = 0;
  // Slots with units waiting for a fork, in the order they started.
  const waitingForFork: Slot<T, U>[] = [];
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
    callbacks.taskFinished(task, outcome);
  };

  const settleIfComplete = (task: T) => {
    const s = state.get(task.name) as TaskState<U>;
    if (s.phase !== 'running' || s.running > 0 || s.queue.length > 0) return;
    const failed = s.results.some((r) => r.status === 'failed');
    const ignored = s.results.some((r) => r.status === 'ignored');
    const allSkipped = s.results.every((r) => r.status === 'skipped');
    finishTask(task, failed ? 'failed' : ignored ? 'ignored' : allSkipped ? 'skipped' : 'succeeded');
  };

  const endSlotIfDone = (slot: Slot<T, U>) => {
    if (slot.running > 0 || slot.pending.length > 0) return;
    (state.get(slot.task.name) as TaskState<U>).running--;
    inFlight--;
    settleIfComplete(slot.task);
  };

  const startUnit = (slot: Slot<T, U>, unit: U) => {
    const { task } = slot;
    const s = state.get(task.name) as TaskState<U>;
    slot.running++;
    if (slot.forked) forksInFlight++;
    callbacks
      .run(unit, task)
      .catch((error: unknown): UnitResult => ({
        status: 'failed',
        message: error instanceof Error ? error.message : String(error),
      }))
      .then((result) => {
        const status = result.status === 'failed' && task.ignoreErrors ? 'ignored' : result.status;
        s.results.push({ ...result, status });
        slot.running--;
        if (slot.forked) forksInFlight--;
        endSlotIfDone(slot);
        notify();
      });
  };

  /** Starts what the slot may start now: a local unit, or its delegated units up to the forks left. */
  const pump = (slot: Slot<T, U>) => {
    while (slot.pending.length > 0 && (!slot.forked || forksInFlight < forks) && !stopped())
      startUnit(slot, slot.pending.shift() as U);
    if (slot.pending.length > 0 && !waitingForFork.includes(slot)) waitingForFork.push(slot);
  };

  const startSlot = (task: T, units: U[]) => {
    (state.get(task.name) as TaskState<U>).running++;
    inFlight++;
    const forked = callbacks.fanOut !== undefined && callbacks.fanOut(units[0]) !== undefined;
    pump({ task, pending: units, running: 0, forked });
  };

  /**
   * Slots waiting for a fork go first when forks free up. Once the run stops, their units that did
   * not start go back to their task's queue, to be reported as dropped with the task's other units.
   */
  const serveWaiting = () => {
    while (waitingForFork.length > 0) {
      const slot = waitingForFork[0];
      if (stopped()) {
        (state.get(slot.task.name) as TaskState<U>).queue.unshift(slot.pending);
        slot.pending = [];
      } else {
        pump(slot);
        if (slot.pending.length > 0) return;
      }
      waitingForFork.shift();
      endSlotIfDone(slot);
    }
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
        callbacks.skipped(
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
    serveWaiting();

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
            s.queue = slotsOf(await callbacks.expand(task), callbacks.fanOut?.bind(callbacks));
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            s.results.push({ status: 'failed', message });
            callbacks.expandFailed?.(task, message);
          }
          s.phase = 'running';
          if (s.queue.length === 0) {
            if (s.results.length === 0) {
              // An empty loop (or no agent chosen): skipped like a false `when`, and recorded.
              const reason = 'not run: no loop item or agent to run it for';
              s.results.push({ status: 'skipped', message: reason });
              callbacks.skipped(task, reason);
            }
            const failed = s.results.some((r) => r.status === 'failed');
            finishTask(task, failed ? (task.ignoreErrors ? 'ignored' : 'failed') : 'skipped');
            if (stopped()) break;
            continue;
          }
        }
        while (s.phase === 'running' && s.queue.length > 0 && inFlight < parallel && !stopped()) {
          startSlot(task, s.queue.shift() as U[]);
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
            for (const unit of s.queue.flat()) callbacks.dropped?.(unit, task, reason);
            s.queue = [];
            settleIfComplete(task);
            continue;
          }
          s.phase = 'done';
          outcomes.set(task.name, 'skipped');
          blockedByFailure.add(task.name);
          blockCheckNeeded = true;
          callbacks.skipped(task, reason);
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
