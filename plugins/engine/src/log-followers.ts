import type { LogFollower, RunStatus, TaskLogLine } from '@runner/plugin-sdk';

/**
 * The units a run's lines were written by, in write order and run-length encoded: `[unit name,
 * agent, lines]`. Stored with the run, so that its log reads in the order it was written after the
 * run as during it (the units' logs are stored one unit at a time).
 */
export type LogOrder = [unit: string, agent: string, lines: number][];

interface Followed {
  /** Lines kept so far over all units: the next line's `seq`. */
  written: number;
  order: LogOrder;
  listeners: Set<LogFollower>;
}

/**
 * Who follows the log of each running run (the run view's live stream). Every line a unit keeps
 * is counted in the order it was written, so a reader that took a page of the log at `written`
 * lines knows which streamed lines that page already held: those with a `seq` below it.
 */
export class LogFollowers {
  private readonly runs = new Map<string, Followed>();

  /** A run started: its lines are counted from here. */
  open(runId: string): void {
    this.runs.set(runId, { written: 0, order: [], listeners: new Set() });
  }

  /** A unit kept a line (called in the same turn as the line is added to the unit's log). */
  line(runId: string, task: string, agent: string, line: TaskLogLine): void {
    const run = this.runs.get(runId);
    if (!run) return;
    const seq = run.written++;
    const last = run.order[run.order.length - 1];
    if (last !== undefined && last[0] === task && last[1] === agent) last[2]++;
    else run.order.push([task, agent, 1]);
    for (const listener of run.listeners) listener({ kind: 'line', seq, task, agent, line });
  }

  /** The order its lines were written in so far; undefined when the run is not running here. */
  order(runId: string): LogOrder | undefined {
    return this.runs.get(runId)?.order;
  }

  /** The run ended and its record is stored: followers are told, then forgotten. */
  close(runId: string, status: RunStatus): void {
    const run = this.runs.get(runId);
    if (!run) return;
    this.runs.delete(runId);
    for (const listener of run.listeners) listener({ kind: 'end', status });
  }

  /** Undefined when the run is not running (ended, or unknown). */
  follow(runId: string, listener: LogFollower): { written: number; stop(): void } | undefined {
    const run = this.runs.get(runId);
    if (!run) return undefined;
    run.listeners.add(listener);
    return { written: run.written, stop: () => run.listeners.delete(listener) };
  }
}
