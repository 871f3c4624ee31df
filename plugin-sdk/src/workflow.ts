// The workflow language as data: what the workflow plugin's parser produces and the engine (and
// any plugin that reads workflows: flows, the UI's editor) consumes. The parser lives in
// plugins/workflow and is reached through WorkflowParserRef; these types and the ref live here so
// that a consumer depends on the SDK alone.
import { createServiceRef } from './service-ref.js';
import type { TemplateSyntax } from './template.js';

/** A place in a workflow file. Line and column are 1-based. */
export interface SourcePosition {
  file: string;
  line: number;
  column: number;
}

/** One problem (or warning) found in a workflow file. */
export interface WorkflowProblem extends SourcePosition {
  message: string;
  /** Where in the document, e.g. `tasks[1].retry.delay`; empty for the file as a whole. */
  path: string;
}

/** A task's retry policy, with durations in milliseconds. */
export interface RetryPolicy {
  /** Total tries, the first included: 1 means no retry. */
  attempts: number;
  /** Wait before the second try. */
  delayMs: number;
  /** Each further wait is the previous one times this (1 = constant). */
  backoff: number;
  /** Upper bound of a wait; absent = no bound. */
  maxDelayMs?: number;
}

/** How a task with several agents in `delegate_to` is spread over them. */
export type Delegation =
  | { strategy: 'all' }
  | { strategy: 'round_robin' }
  | { strategy: 'failover' }
  | { strategy: 'conditional'; when: string };

export type DelegationStrategy = Delegation['strategy'];

/** An item of a literal `loop` list: a scalar or a mapping. */
export type LoopItem = string | number | boolean | { [key: string]: unknown };

/** Where a task is written, so the engine can point run-time errors at the file. */
export interface TaskSource extends SourcePosition {
  /** File line of each line of the script: `scriptLines[n - 1]` is where script line n is. */
  scriptLines: number[];
}

export interface TaskDefinition {
  name: string;
  exec: { script: string };
  /** Names of the tasks that must have succeeded before this one runs; empty when none. */
  dependsOn: string[];
  /** A template; the task is skipped (not failed) when it renders to a false value. */
  when?: string;
  retry?: RetryPolicy;
  timeoutMs?: number;
  /** A literal list, or a template that renders to a list. */
  loop?: LoopItem[] | string;
  /** Agent names, each possibly a template; absent = run locally. */
  delegateTo?: string[];
  delegation: Delegation;
  /** Whether the script runs in a dry run (`run`) or is skipped (`skip`). */
  dryRun: 'skip' | 'run';
  ignoreErrors: boolean;
  source: TaskSource;
}

/** Per-agent values: agent name to a mapping read as `values.<key>`. */
export type ValuesMap = Record<string, Record<string, unknown>>;

/** A validated workflow, with defaults filled in. */
export interface WorkflowDefinition {
  /** The file it was read from (as given to the parser). */
  file: string;
  version: string;
  description?: string;
  template: TemplateSyntax;
  parallel: number;
  /** Delegated units that may run at once across the run (`forks:`); absent: the engine's default, 10. */
  forks?: number;
  /**
   * The most memory a local task's script may use, in bytes (`memory_limit:`); absent: the engine's
   * `engine.memory_limit`. In worker isolation the script's worker gets it as its heap limit.
   */
  memoryLimitBytes?: number;
  /** The stack a run uses when its request names none (`stack:`); see RunRequest.stack. */
  stack?: string;
  vars: Record<string, string>;
  groups: Record<string, string[]>;
  tasks: TaskDefinition[];
  values: ValuesMap;
}

/** A use of a variable in a template, as the template plugin reports it. */
export interface TemplateVariableUse {
  /** Dotted path from the root name: `vars.app`, `tasks.build.outputs.artifact`, `item`. */
  path: string;
  /** 1-based, within the template source. */
  line: number;
  /** 1-based, within the template source. */
  column: number;
}

/**
 * Lists the free variables of a template (locals such as a for-loop's variable excluded). It may
 * throw an error carrying a numeric `line` (and `column`) for a template that does not compile:
 * that becomes a problem at the matching place in the file. Any other throw propagates.
 */
export type TemplateVariablesReader = (source: string, engine: TemplateSyntax) => readonly TemplateVariableUse[];

/**
 * Checks that a Lua chunk compiles. Returns nothing when it does, else the 1-based line (and, when
 * known, column) of the problem within `source` and a message without the chunk-name prefix.
 */
export type ScriptChecker = (
  source: string,
  chunkName: string,
) => void | undefined | { line: number; column?: number; message: string };

export interface ParseWorkflowOptions {
  /** Shown in every problem; a path or a name such as `flow deploy`. */
  file: string;
  checkScript?: ScriptChecker;
  templateVariables?: TemplateVariablesReader;
}

export interface ParsedWorkflow {
  workflow: WorkflowDefinition;
  warnings: WorkflowProblem[];
}

/** The outcome of a validation that does not throw. */
export interface WorkflowValidation {
  /** Present only when there are no problems. */
  workflow?: WorkflowDefinition;
  problems: WorkflowProblem[];
  warnings: WorkflowProblem[];
}

/**
 * Where a run's vars were given, for the words of an error about one: `arguments` (the CLI's
 * `--var "k=v"`; the default) or `fields` (`vars.k`: a hook's `flows.run(name, vars)`, a scheduler
 * job's `vars`).
 */
export type VarsFrom = 'arguments' | 'fields';

/** `--var` arguments (`key=value`) or a ready map, and `--values` contents. */
export interface WorkflowOverrides {
  vars?: readonly string[] | Readonly<Record<string, string>>;
  /** Where a map of `vars` was given (arguments are always the CLI's). */
  varsFrom?: VarsFrom;
  values?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/**
 * Reads and validates workflow files (the workflow language of plugins/workflow/README.md).
 * Everything is synchronous except reading from disk. Errors are RunnerErrors: a bad file is a
 * WorkflowValidationError (code `invalid_workflow`) listing every problem with file:line:column.
 */
export interface WorkflowParser {
  /** Parses and validates; throws a WorkflowValidationError listing every problem. */
  parse(text: string, options: ParseWorkflowOptions): ParsedWorkflow;
  /** Reads a file and parses it; `options.file` defaults to the path. NotFoundError if absent. */
  parseFile(path: string, options?: Partial<ParseWorkflowOptions>): Promise<ParsedWorkflow>;
  /** Every problem and warning, without throwing (editors, the web UI). */
  validate(text: string, options: ParseWorkflowOptions): WorkflowValidation;
  /** Reads the contents of a `--values` file; throws a WorkflowValidationError. */
  parseValues(text: string, options: { file: string }): ValuesMap;
  /** `--var k=v` arguments to a map; throws an InvalidInputError naming every bad argument. */
  parseVarArguments(args: readonly string[]): Record<string, string>;
  /** A copy with `--var` and `--values` applied; `--var` may only set declared vars. */
  applyOverrides(workflow: WorkflowDefinition, overrides: WorkflowOverrides): WorkflowDefinition;
  /** A group's tasks and all they depend on, in file order; InvalidInputError for an unknown group. */
  selectGroup(workflow: WorkflowDefinition, group: string): TaskDefinition[];
  /** Dependencies first, file order among tasks that are ready. */
  topologicalOrder<T extends { name: string; dependsOn: readonly string[] }>(tasks: readonly T[]): T[];
  /** `90s`, `1.5h`, `250ms`, or a bare number of seconds, to milliseconds. */
  parseDuration(text: string | number): number;
  /** The items of a template `loop` (or agents of a template `delegate_to`) from rendered text. */
  loopItemsFromText(rendered: string): LoopItem[];
  /** Whether a rendered `when` holds. */
  conditionHolds(rendered: string): boolean;
}

export const WorkflowParserRef = createServiceRef<WorkflowParser>({
  id: 'workflow.parser',
  description: 'parses and validates workflow files (YAML + Lua)',
});
