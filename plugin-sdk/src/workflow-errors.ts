import { InvalidInputError } from './errors.js';
import type { WorkflowProblem } from './workflow.js';

// In the SDK, not the workflow plugin, so that the engine (and any plugin that checks workflows
// of its own) throws and recognises the one class without importing another plugin's files.

/** `file:line:column: message`, the form editors and terminals turn into links. */
export function formatProblem(problem: WorkflowProblem): string {
  return `${problem.file}:${problem.line}:${problem.column}: ${problem.message}`;
}

/** Orders problems as they appear in the file; `sort` is stable, so ties keep finding order. */
export function sortProblems(problems: readonly WorkflowProblem[]): WorkflowProblem[] {
  return [...problems].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
}

/**
 * A workflow file (or `--values` file) that cannot be used. It carries every problem found, not
 * just the first, so one edit-and-retry cycle fixes them all.
 */
export class WorkflowValidationError extends InvalidInputError {
  override readonly code: string = 'invalid_workflow';
  readonly problems: readonly WorkflowProblem[];
  /** Warnings found alongside, which a caller may still want to show. */
  readonly warnings: readonly WorkflowProblem[];

  constructor(problems: readonly WorkflowProblem[], warnings: readonly WorkflowProblem[] = []) {
    const sorted = sortProblems(problems);
    super(sorted.map(formatProblem).join('\n'), { details: { problems: sorted } });
    this.problems = sorted;
    this.warnings = sortProblems(warnings);
  }
}
