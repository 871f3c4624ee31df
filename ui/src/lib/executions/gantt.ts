import type { Task } from './types';

/** A task's bar on the run's time axis, in percent of the run's span, with its wait before it. */
export interface GanttRow {
  task: Task;
  /** The task started: a bar from `left`, `width` wide. */
  bar?: { left: number; width: number };
  /** Where the task was started relative to the run's start (the wait before it, from 0). */
  waited: number;
}

export interface GanttLane {
  agent: string;
  rows: GanttRow[];
}

/**
 * The run's tasks as a Gantt chart: a lane per agent (in the order agents first worked), a row per
 * task in the order it started, each bar from its start to its end (`now` while it runs). A row
 * per task, not per agent, so retries and waits of one task stay visible among 200 others.
 */
export function ganttLanes(tasks: Task[], runStart: number, runEnd: number): GanttLane[] {
  const span = Math.max(1, runEnd - runStart);
  const at = (iso: string | undefined, fallback: number) => (iso ? Date.parse(iso) : fallback);
  const started = [...tasks].sort((a, b) => at(a.started_at, Infinity) - at(b.started_at, Infinity));
  const lanes = new Map<string, GanttRow[]>();
  for (const task of started) {
    const begin = task.started_at ? Date.parse(task.started_at) - runStart : undefined;
    const end = at(task.completed_at, runEnd) - runStart;
    const row: GanttRow = {
      task,
      waited: begin === undefined ? 0 : (begin / span) * 100,
      ...(begin === undefined
        ? {}
        : { bar: { left: (begin / span) * 100, width: Math.max(0.4, ((end - begin) / span) * 100) } }),
    };
    lanes.set(task.agent, [...(lanes.get(task.agent) ?? []), row]);
  }
  return [...lanes.entries()].map(([agent, rows]) => ({ agent, rows }));
}

/** Four even ticks of the time axis, in seconds from the run's start. */
export function axisTicks(spanMs: number): number[] {
  return [0, 0.25, 0.5, 0.75, 1].map((f) => (spanMs * f) / 1000);
}
