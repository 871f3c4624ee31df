import {
  didYouMean,
  InvalidInputError,
  isMasterHost,
  type AgentDelegator,
  type WorkflowProblem,
  type RunRequest,
  type TemplateEngine,
  type WorkflowParser,
  WorkflowValidationError,
} from '@runner/plugin-sdk';
import type { TaskDefinition, WorkflowDefinition } from './workflow-types.js';

/**
 * Template roots known before a run starts. A `delegate_to` entry that reads only these renders
 * now; one that reads `item`, `tasks`, `values`, `env` or the run id renders when its task is
 * ready. `env` waits for the run: this check also serves `POST /workflows/validate`, which any
 * viewer may call, and an unknown agent's name in its answer would echo the master's variables.
 */
const KNOWN_BEFORE_RUN = new Set(['vars']);

export interface AgentCheckDeps {
  delegator: AgentDelegator;
  template: TemplateEngine;
  parser: Pick<WorkflowParser, 'loopItemsFromText'>;
  /** The agents rendered names stand for (`group:web` -> its members); throws for an unknown group. */
  expandAgents(names: string[]): string[];
}

/**
 * Refuses a run that names an agent the master does not know, before anything is recorded or runs
 * (found mid-run, the tasks before had already had their effects). Checks `--delegate-to` (an
 * InvalidInputError on `delegate_to`) and every selected task's `delegate_to`: literal names, and
 * templates that read only vars and env (a WorkflowValidationError at the task, one problem per
 * task). Offline agents are not refused: one may connect before its task is ready.
 */
export function refuseUnknownAgents(
  deps: AgentCheckDeps,
  workflow: WorkflowDefinition,
  tasks: readonly TaskDefinition[],
  request: RunRequest,
): void {
  const { delegator } = deps;
  const known = () => delegator.names?.() ?? [];
  // `localhost` is the master itself, known whatever agents exist.
  const unknownOf = (names: readonly string[]) => [
    ...new Set(names.filter((n) => !isMasterHost(n) && !delegator.agent(n))),
  ];
  const describe = (names: readonly string[]) => {
    const list = names.map((n) => `"${n}"${didYouMean(n, known())}`).join(', ');
    const all = known();
    const hint = all.length === 0 ? 'no agent has registered with this master' : `known agents: ${all.join(', ')}`;
    return `unknown ${names.length === 1 ? 'agent' : 'agents'} ${list} (${hint})`;
  };

  const runUnknown = unknownOf(request.delegateTo ?? []);
  if (runUnknown.length > 0)
    throw new InvalidInputError(`delegate_to: ${describe(runUnknown)}`, { field: 'delegate_to' });

  const context = { vars: workflow.vars };
  const problems: WorkflowProblem[] = [];
  for (const task of tasks) {
    if (task.delegateTo === undefined) continue;
    const path = `tasks[${workflow.tasks.findIndex((t) => t.name === task.name)}].delegate_to`;
    const { file, line, column } = task.source;
    const problem = (text: string) =>
      problems.push({ file, line, column, path, message: `${path}: task "${task.name}": ${text}` });
    let names: string[];
    try {
      // A template that reads only vars may name a group: expanded as literal ones were.
      names = deps.expandAgents(task.delegateTo.flatMap((entry) => resolvable(deps, workflow, task, entry, context)));
    } catch (error) {
      problem((error as Error).message);
      continue;
    }
    const unknown = unknownOf(names);
    if (unknown.length > 0) problem(describe(unknown));
  }
  if (problems.length > 0) throw new WorkflowValidationError(problems);
}

/** The agent names an entry stands for when they are known now; none when it must wait for the run. */
function resolvable(
  deps: AgentCheckDeps,
  workflow: WorkflowDefinition,
  task: TaskDefinition,
  entry: string,
  context: Record<string, unknown>,
): string[] {
  if (!entry.includes('{{') && !entry.includes('{%')) return [entry];
  const roots = deps.template.variables(entry, workflow.template).map((v) => String(v.segments[0]));
  if (!roots.every((root) => KNOWN_BEFORE_RUN.has(root))) return [];
  try {
    // Only what renders on this thread at once: the rest waits for the run, bounded by its timeout.
    if (!deps.template.isBounded(entry, workflow.template)) return [];
    const text = deps.template.render(entry, context, {
      syntax: workflow.template,
      name: `task ${task.name} delegate_to`,
    });
    return deps.parser.loopItemsFromText(text).map(String);
  } catch {
    // A template that does not render now fails its task at run time, with the template's message.
    return [];
  }
}
