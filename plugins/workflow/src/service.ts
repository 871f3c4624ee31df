import { createServiceRef } from '@runner/plugin-sdk';
import type {
  LoopItem,
  ParsedWorkflow,
  ParseWorkflowOptions,
  TaskDefinition,
  ValuesMap,
  WorkflowDefinition,
  WorkflowOverrides,
  WorkflowValidation,
} from './types.js';

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
