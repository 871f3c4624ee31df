import { InvalidInputError, didYouMean } from '@runner/plugin-sdk';
import type { TaskDefinition, WorkflowDefinition } from './types.js';

/** The part of a task the graph helpers need. */
export interface GraphNode {
  name: string;
  dependsOn: readonly string[];
}

/** One dependency cycle, as task names in dependency order with the first repeated at the end. */
export interface DependencyCycle {
  names: string[];
  /** The task whose `depends_on` entry closes the cycle, and that entry's index. */
  closingTask: string;
  closingEntry: number;
}

/** `circular dependency: a -> b -> a` */
export function describeCycle(cycle: DependencyCycle): string {
  return `circular dependency: ${cycle.names.join(' -> ')}`;
}

/**
 * The dependency cycles a depth-first walk in file order meets (one per back edge, so at least
 * one in every tangle), each rotated to start at the task that comes first in the file. Unknown
 * names are ignored: they are reported on their own.
 */
export function findCycles(tasks: readonly GraphNode[]): DependencyCycle[] {
  const index = new Map<string, number>();
  tasks.forEach((t, i) => {
    if (!index.has(t.name)) index.set(t.name, i);
  });
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const cycles: DependencyCycle[] = [];

  const visit = (name: string): void => {
    state.set(name, 'visiting');
    stack.push(name);
    const task = tasks[index.get(name)!];
    for (const dep of task.dependsOn) {
      if (!index.has(dep)) continue;
      const s = state.get(dep);
      if (s === undefined) {
        visit(dep);
      } else if (s === 'visiting') {
        const members = stack.slice(stack.indexOf(dep));
        const first = members.reduce((a, b) => (index.get(a)! <= index.get(b)! ? a : b));
        const at = members.indexOf(first);
        const rotated = [...members.slice(at), ...members.slice(0, at)];
        const key = rotated.join('\0');
        if (seen.has(key)) continue;
        seen.add(key);
        // The entry that closes the rotated cycle belongs to its last member and names `first`.
        const closingTask = rotated[rotated.length - 1];
        const closingEntry = tasks[index.get(closingTask)!].dependsOn.indexOf(first);
        cycles.push({ names: [...rotated, first], closingTask, closingEntry });
      }
    }
    stack.pop();
    state.set(name, 'done');
  };

  for (const task of tasks) if (!state.has(task.name)) visit(task.name);
  return cycles;
}

/**
 * The names `names` depend on, directly or not, `names` themselves included. `tasks` may be given
 * as a map by name, for a caller that asks for many closures (building it each time was quadratic).
 */
export function dependencyClosure(
  tasks: readonly GraphNode[] | ReadonlyMap<string, GraphNode>,
  names: Iterable<string>,
): Set<string> {
  const byName: ReadonlyMap<string, GraphNode> = Array.isArray(tasks)
    ? new Map((tasks as readonly GraphNode[]).map((t) => [t.name, t]))
    : (tasks as ReadonlyMap<string, GraphNode>);
  const out = new Set<string>();
  const pending = [...names];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (out.has(name)) continue;
    out.add(name);
    for (const dep of byName.get(name)?.dependsOn ?? []) pending.push(dep);
  }
  return out;
}

/**
 * The tasks in an order that runs every dependency first. Among tasks that are ready, file order
 * wins, so a file whose dependencies all point backwards keeps its order exactly (what
 * `parallel: 1` promises). Throws an InvalidInputError on a cycle or an unknown name.
 */
export function topologicalOrder<T extends GraphNode>(tasks: readonly T[]): T[] {
  const names = new Set(tasks.map((t) => t.name));
  for (const task of tasks) {
    for (const dep of task.dependsOn) {
      if (!names.has(dep)) {
        throw new InvalidInputError(`task "${task.name}" depends on unknown task "${dep}"${didYouMean(dep, names)}`);
      }
    }
  }
  const cycles = findCycles(tasks);
  if (cycles.length > 0) throw new InvalidInputError(describeCycle(cycles[0]));

  const done = new Set<string>();
  const order: T[] = [];
  const remaining = [...tasks];
  while (remaining.length > 0) {
    // Quadratic, but workflows hold tens of tasks, and the scan is what keeps file order stable.
    const next = remaining.findIndex((t) => t.dependsOn.every((d) => done.has(d)));
    const [task] = remaining.splice(next, 1);
    done.add(task.name);
    order.push(task);
  }
  return order;
}

/**
 * The tasks `runner run --group <group>` runs: the group's tasks and everything they depend on,
 * directly or not, in file order. Throws an InvalidInputError listing the known groups.
 */
export function selectGroup(workflow: WorkflowDefinition, group: string): TaskDefinition[] {
  const members = Object.hasOwn(workflow.groups, group) ? workflow.groups[group] : undefined;
  if (members === undefined) {
    const known = Object.keys(workflow.groups);
    if (known.length === 0) {
      throw new InvalidInputError(`unknown group "${group}": the workflow defines no groups`, { field: 'group' });
    }
    throw new InvalidInputError(
      `unknown group "${group}"${didYouMean(group, known)}; known groups: ${known.join(', ')}`,
      { field: 'group' },
    );
  }
  const wanted = dependencyClosure(workflow.tasks, members);
  return workflow.tasks.filter((t) => wanted.has(t.name));
}
