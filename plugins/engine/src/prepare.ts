import {
  InvalidInputError,
  isMasterHost,
  type RunInputs,
  type RunRequest,
  type WorkflowProblem,
  WorkflowValidationError,
} from '@runner/plugin-sdk';
import { refuseUnknownAgents } from './agent-check.js';
import { expandRunGroups, expandTargets } from './group-targets.js';
import type { EngineDeps } from './engine.js';
import { contributedVars, refuseUnknownKeys, type RunInputContributors } from './run-inputs.js';
import type { ParseCache } from './parse-cache.js';
import type { WorkflowSources } from './sources.js';
import type { TaskDefinition, WorkflowDefinition } from './workflow-types.js';

/**
 * Everything checked before a run is recorded: the source resolved, the workflow parsed and
 * validated (every problem with file:line:column, scripts compiled, template variables known),
 * overrides applied, the group selected, agent groups (`group:web`) expanded to their members,
 * and delegation refused where no transport could do it or to an agent the transport does not know.
 */
export async function prepareRun(
  deps: Pick<EngineDeps, 'parser' | 'runtime' | 'template' | 'logger' | 'delegator' | 'groups'>,
  sources: WorkflowSources,
  request: RunRequest,
  contributors?: RunInputContributors,
  cache?: ParseCache,
): Promise<{
  workflow: WorkflowDefinition;
  tasks: TaskDefinition[];
  name: string;
  warnings: WorkflowProblem[];
  runAgents?: string[];
  /** The run's stack: the request's, else the workflow's `stack:`. */
  stack?: string;
  /** What the run-input contributors added (RunInputsContributor); undefined when none wanted the run. */
  inputs?: RunInputs;
}> {
  const { text, file, name: sourceName } = await sources.resolve(request.source);
  const parse = () =>
    deps.parser.parse(text, {
      file,
      checkScript: (source, chunkName) => {
        try {
          deps.runtime.compile(source, chunkName);
          return undefined;
        } catch (error) {
          const { line, column } = (error as { details?: { line?: number; column?: number } }).details ?? {};
          if (typeof line !== 'number') throw error;
          // The runtime knows the column when the token it names occurs once on the line.
          return {
            line,
            column: typeof column === 'number' ? column : undefined,
            message: (error as Error).message.replace(/^[^:]*:\d+:\s*/, ''),
          };
        }
      },
      templateVariables: (source, syntax) => deps.template.variables(source, syntax).filter((v) => !v.optional),
    });
  const { workflow: parsed, warnings } = cache ? cache.get(text, file, parse) : parse();
  const name = request.workflowName ?? sourceName;
  const stack = request.stack ?? parsed.stack;
  // Before the vars merge: a contributor's values for declared vars sit under --var's.
  const inputs = await contributors?.gather(stack === request.stack ? request : { ...request, stack }, name);
  if (inputs?.strict) refuseUnknownKeys(text, inputs.strict);
  const workflow = deps.parser.applyOverrides(parsed, {
    vars: contributedVars(parsed.vars, inputs?.vars, request.vars),
    varsFrom: request.varsFrom,
    values: request.values,
  });
  const chosen = request.group ? deps.parser.selectGroup(workflow, request.group) : workflow.tasks;
  // Without an agent transport (`runner run` with no master) a delegated task could never run:
  // refuse the run before any task starts, rather than after the tasks before it had effects.
  if (!deps.delegator) refuseDelegation(workflow, chosen, request);
  const { tasks: selected, runAgents } = expandRunGroups(deps.groups, workflow, chosen, request);
  // Every agent the run names, directly or through a group, must be known (issue 10: refuse early).
  if (deps.delegator)
    refuseUnknownAgents(
      {
        delegator: deps.delegator,
        template: deps.template,
        parser: deps.parser,
        expandAgents: (names) => expandTargets(deps.groups, names),
      },
      workflow,
      selected,
      { ...request, delegateTo: runAgents },
    );
  return {
    workflow,
    tasks: deps.parser.topologicalOrder(selected),
    name,
    warnings: [...warnings],
    ...(runAgents === undefined ? {} : { runAgents }),
    ...(stack === undefined ? {} : { stack }),
    ...(inputs === undefined ? {} : { inputs }),
  };
}

const NO_TRANSPORT = 'no agent transport in this process (delegation needs a master with connected agents)';

/** Every task of the run that names agents, as problems at the task (file:line:column). */
function refuseDelegation(workflow: WorkflowDefinition, tasks: readonly TaskDefinition[], request: RunRequest): void {
  const agents = (names: readonly string[]) =>
    `${names.length === 1 ? 'agent' : 'agents'} ${names.map((n) => `"${n}"`).join(', ')}`;
  const remote = (names: readonly string[] | undefined) => (names ?? []).some((n) => !isMasterHost(n));
  if (request.delegateTo && remote(request.delegateTo)) {
    throw new InvalidInputError(`delegate_to: cannot delegate to ${agents(request.delegateTo)}: ${NO_TRANSPORT}`, {
      field: 'delegate_to',
    });
  }
  const problems = tasks
    .filter((task) => remote(task.delegateTo))
    .map((task) => {
      const path = `tasks[${workflow.tasks.findIndex((t) => t.name === task.name)}].delegate_to`;
      const { file, line, column } = task.source;
      return {
        file,
        line,
        column,
        path,
        message: `${path}: task "${task.name}" cannot delegate to ${agents(task.delegateTo ?? [])}: ${NO_TRANSPORT}`,
      };
    });
  if (problems.length > 0) throw new WorkflowValidationError(problems);
}
