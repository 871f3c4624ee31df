import type { LuaValue, TaskResult, TaskStatus } from '@runner/plugin-sdk';
import type { Unit } from './units.js';

/** How records show where a unit runs: its agent, the failover list `a|b`, or `localhost`. */
export function agentLabel(unit: Pick<Unit, 'agents'>): string {
  return unit.agents.length === 1 ? unit.agents[0] : unit.agents.length > 1 ? unit.agents.join('|') : 'localhost';
}

/** The record of a unit that never ran: skipped (with why), or failed before it could start. */
export function notRunResult(fields: {
  name: string;
  task: string;
  status: TaskStatus;
  message: string;
  agent?: string;
  item?: LuaValue;
  log?: TaskResult['log'];
  /** When it was decided, for a failure (a skip has no times: it never started). */
  at?: string;
}): TaskResult {
  return {
    name: fields.name,
    task: fields.task,
    ...(fields.item === undefined ? {} : { item: fields.item }),
    agent: fields.agent ?? 'localhost',
    status: fields.status,
    attempts: 0,
    ...(fields.at === undefined ? {} : { startedAt: fields.at, completedAt: fields.at }),
    duration: 0,
    message: fields.message,
    log: fields.log ?? [],
    logTruncated: false,
  };
}
