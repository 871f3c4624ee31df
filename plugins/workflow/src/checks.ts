import { dependencyClosure, describeCycle, findCycles, type GraphNode } from './graph.js';
import { TEMPLATE_ROOTS } from './names.js';
import type { Reader } from './reader.js';
import type { TaskDraft, WorkflowDraft } from './schema.js';
import { ScalarLocator } from './source-map.js';
import { closest, didYouMean } from '@runner/plugin-sdk';
import { hasTemplateTag, maskTemplates, splitVariablePath } from './template-syntax.js';
import type { ScriptChecker, TemplateVariablesReader } from './types.js';

/** The first task of each name: a duplicate is reported, and graph checks use the first. */
function firstByName(draft: WorkflowDraft): Map<string, TaskDraft> {
  const first = new Map<string, TaskDraft>();
  for (const task of draft.tasks) if (task.name !== undefined && !first.has(task.name)) first.set(task.name, task);
  return first;
}

function graphNodes(first: Map<string, TaskDraft>): GraphNode[] {
  return [...first.values()].map((t) => ({ name: t.name!, dependsOn: t.deps.map((d) => d.name) }));
}

/** Duplicate names, unknown names in depends_on and groups, and dependency cycles. */
export function checkGraph(r: Reader, draft: WorkflowDraft): void {
  const first = firstByName(draft);
  for (const task of draft.tasks) {
    const original = task.name === undefined ? undefined : first.get(task.name);
    if (original && original !== task) {
      const line = r.position(original.nameNode ?? original.node).line;
      r.error(
        task.nameNode,
        `${task.path}.name`,
        `${task.path}.name: duplicate task name "${task.name}" (first defined at line ${line})`,
      );
    }
  }
  const names = [...first.keys()];
  const unknown = (ref: { name: string; node: unknown; path: string }) =>
    r.error(ref.node as never, ref.path, `${ref.path}: unknown task "${ref.name}"${didYouMean(ref.name, names)}`);
  for (const task of draft.tasks) for (const dep of task.deps) if (!first.has(dep.name)) unknown(dep);
  for (const group of draft.groups) for (const member of group.members) if (!first.has(member.name)) unknown(member);

  for (const cycle of findCycles(graphNodes(first))) {
    const closing = first.get(cycle.closingTask)!.deps[cycle.closingEntry];
    r.error(closing.node, closing.path, describeCycle(cycle));
  }
}

/** A throw from a template hook that points into the template: reported, not propagated. */
function positioned(error: unknown): { line: number; column?: number; message: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  const { line, column } = error as Error & { line?: unknown; column?: unknown };
  if (typeof line !== 'number') return undefined;
  return { line, column: typeof column === 'number' ? column : undefined, message: error.message };
}

/**
 * Unknown template variables, `item` outside a loop, and `tasks.<name>` references: an unknown
 * task is an error (it can never work), a known one that is not a dependency a warning (it works
 * only when file order happens to run it first).
 */
export function checkTemplates(r: Reader, draft: WorkflowDraft, hook: TemplateVariablesReader | undefined): void {
  if (!hook) return;
  const declared = Object.keys(draft.vars);
  const first = firstByName(draft);
  const nodes = new Map(graphNodes(first).map((n) => [n.name, n]));
  for (const task of draft.tasks) {
    // Computed when a template first reads `tasks.<name>`: most tasks never do, and a closure per
    // task (over a map rebuilt each time) made validation quadratic in the number of tasks.
    let upstream: Set<string> | undefined;
    const dependsOn = (name: string) =>
      (upstream ??= dependencyClosure(
        nodes,
        task.deps.map((d) => d.name),
      )).has(name);
    const warned = new Set<string>();
    for (const site of task.templates) {
      const locator = new ScalarLocator(r.source, site.node, site.value);
      let uses;
      try {
        uses = hook(site.value, draft.template);
      } catch (error) {
        const at = positioned(error);
        if (!at) throw error;
        r.error(locator.locate(at.line, at.column), site.path, `${site.path}: template error: ${at.message}`);
        continue;
      }
      for (const use of uses) {
        const segments = splitVariablePath(use.path);
        if (!segments) continue;
        const pos = locator.locate(use.line, use.column);
        const [root, second] = segments;
        const error = (message: string) => r.error(pos, site.path, `${site.path}: ${message}`);
        if (!TEMPLATE_ROOTS.includes(root)) {
          const hint = didYouMean(root, TEMPLATE_ROOTS) || ` (known: ${TEMPLATE_ROOTS.join(', ')})`;
          error(`unknown template variable "${root}"${hint}`);
        } else if (root === 'vars' && second !== undefined && !declared.includes(second)) {
          const near = closest(second, declared);
          const hint = near
            ? ` (did you mean "vars.${near}"?)`
            : declared.length > 0
              ? ` (declared: ${declared.join(', ')})`
              : ' (the workflow declares no vars)';
          error(`"vars.${second}" is not declared in vars${hint}`);
        } else if (root === 'item' || root === 'loop_index') {
          if (!site.inIteration) {
            error(`"${root}" is not defined here: the loop is rendered before its first iteration`);
          } else if (!task.hasLoop) {
            error(`"${root}" is only defined in a task with loop`);
          }
        } else if (root === 'tasks' && second !== undefined) {
          if (!first.has(second)) {
            const near = closest(second, first.keys());
            error(`"tasks.${second}" names no task${near ? ` (did you mean "tasks.${near}"?)` : ''}`);
          } else if (!dependsOn(second) && !warned.has(second)) {
            warned.add(second);
            const self = second === task.name;
            r.warn(
              pos,
              site.path,
              self
                ? `${site.path}: task "${second}" reads its own result "tasks.${second}", which is not set while it runs`
                : `${site.path}: task "${task.name ?? task.path}" reads "tasks.${second}" but does not depend on it; ` +
                    `add "${second}" to depends_on so that it runs first`,
            );
          }
        }
      }
    }
  }
}

/** Runs the Lua syntax check on every script, with template tags masked, at the file's lines. */
export function checkScripts(r: Reader, draft: WorkflowDraft, hook: ScriptChecker | undefined): void {
  if (!hook) return;
  for (const task of draft.tasks) {
    if (!task.script) continue;
    const { value, node } = task.script;
    const source = hasTemplateTag(value, draft.template) ? maskTemplates(value, draft.template) : value;
    const result = hook(source, task.name ?? task.path);
    if (!result) continue;
    const path = `${task.path}.exec.script`;
    r.error(
      new ScalarLocator(r.source, node, value).locate(result.line, result.column),
      path,
      // The name says which task at a glance; the index alone made the reader count tasks.
      `${path}: ${task.name ? `the script of task "${task.name}" does not compile` : 'does not compile'}: ${result.message}`,
    );
  }
}
