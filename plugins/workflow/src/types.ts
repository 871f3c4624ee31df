/** The template engine a workflow's templates are written for. */
export type TemplateEngine = 'jinja' | 'go';

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
  template: TemplateEngine;
  parallel: number;
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
export type TemplateVariablesHook = (source: string, engine: TemplateEngine) => readonly TemplateVariableUse[];

/**
 * Checks that a Lua chunk compiles. Returns nothing when it does, else the 1-based line (and, when
 * known, column) of the problem within `source` and a message without the chunk-name prefix.
 */
export type ScriptCheckHook = (
  source: string,
  chunkName: string,
) => void | undefined | { line: number; column?: number; message: string };

export interface ParseWorkflowOptions {
  /** Shown in every problem; a path or a name such as `flow deploy`. */
  file: string;
  checkScript?: ScriptCheckHook;
  templateVariables?: TemplateVariablesHook;
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

/** `--var` arguments (`key=value`) or a ready map, and `--values` contents. */
export interface WorkflowOverrides {
  vars?: readonly string[] | Readonly<Record<string, string>>;
  values?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}
