import {
  didYouMean,
  groupTarget,
  InvalidInputError,
  type AgentGroups,
  type RunRequest,
  type WorkflowProblem,
  WorkflowValidationError,
} from '@runner/plugin-sdk';
import { hasTemplate } from './units.js';
import type { TaskDefinition, WorkflowDefinition } from './workflow-types.js';

/** What the engine reads of the agent groups (provided by the agent-groups plugin on a master). */
export type GroupLookup = Pick<AgentGroups, 'get' | 'list'>;

/**
 * The agents `delegate_to` names stand for: each `group:<name>` replaced by the group's members
 * as they are now, agent names kept; an agent named twice (alone and in a group, or in two groups)
 * runs once, where it first appears. An unknown or empty group is an InvalidInputError whose
 * message the caller places (field or task).
 */
export function expandTargets(groups: GroupLookup | undefined, names: readonly string[]): string[] {
  const agents = names.flatMap((entry) => {
    const name = groupTarget(entry);
    return name === undefined ? [entry] : membersOf(groups, name);
  });
  return [...new Set(agents)];
}

function membersOf(groups: GroupLookup | undefined, name: string): string[] {
  if (!groups)
    throw new InvalidInputError(
      `agent group "${name}": agent groups are not available in this process (the agent-groups plugin runs on a master)`,
    );
  const group = groups.get(name);
  if (!group) {
    const names = groups.list().map((g) => g.name);
    const hint = names.length === 0 ? 'no agent group exists on this master' : `agent groups: ${names.join(', ')}`;
    throw new InvalidInputError(`unknown agent group "${name}"${didYouMean(name, names)} (${hint})`);
  }
  if (group.members.length === 0)
    throw new InvalidInputError(`agent group "${name}" has no members (add some with runner agent group add)`);
  return group.members;
}

/**
 * The run's groups expanded at its start (issue 11 item 5): `--delegate-to` and every selected
 * task's literal `delegate_to` entries, so a group changed while the run goes on does not move
 * its tasks. Template entries expand when they render (their task's turn). Refused here, before
 * anything is recorded: an unknown or empty group, as an InvalidInputError on `delegate_to` for
 * the run's list and as problems at the tasks (file:line:column) for the workflow's.
 */
export function expandRunGroups(
  groups: GroupLookup | undefined,
  workflow: WorkflowDefinition,
  tasks: readonly TaskDefinition[],
  request: RunRequest,
): { tasks: TaskDefinition[]; runAgents?: string[] } {
  let runAgents = request.delegateTo;
  if (runAgents?.some((entry) => groupTarget(entry) !== undefined)) {
    try {
      runAgents = expandTargets(groups, runAgents);
    } catch (error) {
      throw new InvalidInputError(`delegate_to: ${(error as Error).message}`, { field: 'delegate_to' });
    }
  }
  const problems: WorkflowProblem[] = [];
  const expanded = tasks.map((task) => {
    if (!task.delegateTo?.some((entry) => groupTarget(entry) !== undefined)) return task;
    try {
      // Templates stay as written: they render later, per loop item.
      const delegateTo = task.delegateTo.flatMap((e) => (hasTemplate(e) ? [e] : expandTargets(groups, [e])));
      return { ...task, delegateTo: [...new Set(delegateTo)] };
    } catch (error) {
      const path = `tasks[${workflow.tasks.findIndex((t) => t.name === task.name)}].delegate_to`;
      const { file, line, column } = task.source;
      problems.push({ file, line, column, path, message: `${path}: task "${task.name}": ${(error as Error).message}` });
      return task;
    }
  });
  if (problems.length > 0) throw new WorkflowValidationError(problems);
  return { tasks: expanded, ...(runAgents === undefined ? {} : { runAgents }) };
}
