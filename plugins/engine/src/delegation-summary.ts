import { readFile } from 'node:fs/promises';
import type { RunRequest } from '@runner/plugin-sdk';
import { parse } from 'yaml';

/** A task that would run on agents, and its `delegate_to` as written (names, or a template). */
export interface DelegatedTask {
  task: string;
  agents: string;
}

/**
 * Which tasks of a run would reach agents, read from the workflow without a kernel (a master
 * validates it for real). With --group, only the group's tasks and what they depend on count;
 * `--delegate-to` sends every selected task. Undefined when the file cannot be read or parsed
 * here: the caller then asks rather than skips the question.
 */
export async function delegationSummary(request: RunRequest): Promise<DelegatedTask[] | undefined> {
  type LooseTask = { name?: unknown; depends_on?: unknown; delegate_to?: unknown };
  let doc: { tasks?: LooseTask[]; groups?: Record<string, unknown> };
  try {
    const source = request.source;
    const text = 'content' in source ? source.content : 'file' in source ? await readFile(source.file, 'utf8') : '';
    doc = (parse(text) ?? {}) as typeof doc;
  } catch {
    return undefined;
  }
  const tasks = Array.isArray(doc.tasks) ? doc.tasks.filter((t) => t !== null && typeof t === 'object') : [];
  const byName = new Map(tasks.map((t) => [String(t.name), t]));
  const group = request.group ? doc.groups?.[request.group] : undefined;
  let selected = tasks;
  if (Array.isArray(group)) {
    const seen = new Set<string>();
    const visit = (taskName: string): void => {
      if (seen.has(taskName)) return;
      seen.add(taskName);
      const task = byName.get(taskName);
      if (task && Array.isArray(task.depends_on)) task.depends_on.map(String).forEach(visit);
    };
    group.map(String).forEach(visit);
    selected = tasks.filter((t) => seen.has(String(t.name)));
  }
  const forced = request.delegateTo?.length ? request.delegateTo.join(', ') : undefined;
  return selected
    .filter((t) => forced !== undefined || t.delegate_to !== undefined)
    .map((t) => ({ task: String(t.name), agents: forced ?? agentsAsWritten(t.delegate_to) }));
}

function agentsAsWritten(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join(', ') : String(value);
}

/** The terminal's question before a run reaches agents: which tasks, on which agents. */
export function confirmationQuestion(workflow: string, tasks: DelegatedTask[] | undefined): string {
  if (tasks === undefined)
    return `Run ${workflow} on agents? Its tasks may execute on remote hosts (the file could not be read here to list them). [y/N] `;
  const width = Math.max(...tasks.map((t) => t.task.length));
  const lines = tasks.map((t) => `  ${t.task.padEnd(width)}  on ${t.agents}`);
  const these = tasks.length === 1 ? 'This task executes' : `These ${tasks.length} tasks execute`;
  return `Run ${workflow} on agents? ${these} on remote hosts:\n${lines.join('\n')}\n[y/N] `;
}
