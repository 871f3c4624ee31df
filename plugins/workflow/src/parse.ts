import { LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import { checkGraph, checkScripts, checkTemplates } from './checks.js';
import { sortProblems, WorkflowValidationError, userKeyed } from '@runner/plugin-sdk';
import { setOwn } from './objects.js';
import { Reader } from './reader.js';
import { WorkflowSchema, type TaskDraft, type WorkflowDraft } from './schema.js';
import { ScalarLocator, SourceText } from './source-map.js';
import type {
  ParsedWorkflow,
  ParseWorkflowOptions,
  TaskDefinition,
  ValuesMap,
  WorkflowDefinition,
  WorkflowValidation,
} from './types.js';

/** A YAML parser error in the words a workflow author needs. */
function yamlMessage(error: YAMLError, text: string): string {
  switch (error.code) {
    case 'DUPLICATE_KEY': {
      const key = /^[^:\n]*/
        .exec(text.slice(error.pos[0]))?.[0]
        .trim()
        .replace(/^["']|["']$/g, '');
      return key ? `duplicate key "${key}"` : 'duplicate key';
    }
    case 'MULTIPLE_DOCS':
      return 'a second YAML document starts here; a workflow file holds one document';
    default:
      return `invalid YAML: ${error.message}`;
  }
}

/** Reads the text as one YAML document; syntax errors end the reading there. */
function load(text: string, file: string): { reader: Reader; doc: Document } {
  const lineCounter = new LineCounter();
  // `merge` accepts `<<: *defaults`, which YAML 1.2 leaves out but Ansible users rely on.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true, uniqueKeys: true });
  const source = new SourceText(text, lineCounter);
  const reader = new Reader(file, source, doc);
  for (const error of doc.errors) reader.error(source.position(error.pos[0]), '', yamlMessage(error, text));
  for (const warning of doc.warnings) reader.warn(source.position(warning.pos[0]), '', `YAML: ${warning.message}`);
  return { reader, doc };
}

function buildTask(reader: Reader, task: TaskDraft): TaskDefinition {
  const script = task.script!;
  const at = reader.position(task.node);
  const definition: TaskDefinition = {
    name: task.name!,
    exec: { script: script.value },
    dependsOn: task.deps.map((d) => d.name),
    delegation: task.delegation,
    dryRun: task.dryRun,
    ignoreErrors: task.ignoreErrors,
    source: {
      file: reader.file,
      line: at.line,
      column: at.column,
      scriptLines: new ScalarLocator(reader.source, script.node, script.value).fileLines(),
    },
  };
  if (task.when !== undefined) definition.when = task.when;
  if (task.retry !== undefined) definition.retry = task.retry;
  if (task.timeoutMs !== undefined) definition.timeoutMs = task.timeoutMs;
  if (task.loop !== undefined) definition.loop = task.loop;
  if (task.delegateTo !== undefined) definition.delegateTo = task.delegateTo;
  return definition;
}

function build(reader: Reader, draft: WorkflowDraft): WorkflowDefinition {
  const groups = userKeyed<string[]>();
  for (const group of draft.groups)
    setOwn(
      groups,
      group.name,
      group.members.map((m) => m.name),
    );
  const workflow: WorkflowDefinition = {
    file: reader.file,
    version: draft.version!,
    template: draft.template,
    parallel: draft.parallel,
    vars: draft.vars,
    groups,
    tasks: draft.tasks.map((t) => buildTask(reader, t)),
    values: draft.values,
  };
  if (draft.description !== undefined) workflow.description = draft.description;
  if (draft.forks !== undefined) workflow.forks = draft.forks;
  if (draft.stack !== undefined) workflow.stack = draft.stack;
  if (draft.memoryLimitBytes !== undefined) workflow.memoryLimitBytes = draft.memoryLimitBytes;
  return workflow;
}

/**
 * Every problem and warning of a workflow file, without throwing: for editors and the web UI.
 * `workflow` is set only when there is no problem.
 */
export function validateWorkflow(text: string, options: ParseWorkflowOptions): WorkflowValidation {
  const { reader, doc } = load(text, options.file);
  // After a syntax error the document is a guess; checking it would bury the real error.
  if (reader.problems.length > 0)
    return { problems: sortProblems(reader.problems), warnings: sortProblems(reader.warnings) };
  const draft = new WorkflowSchema(reader).read(doc.contents as never);
  checkGraph(reader, draft);
  checkTemplates(reader, draft, options.templateVariables);
  checkScripts(reader, draft, options.checkScript);
  const warnings = sortProblems(reader.warnings);
  if (reader.problems.length > 0) return { problems: sortProblems(reader.problems), warnings };
  return { workflow: build(reader, draft), problems: [], warnings };
}

/**
 * Parses and validates a workflow. Throws a WorkflowValidationError that lists every problem
 * (`file:line:column: message`, one a line); warnings come back with the workflow.
 */
export function parseWorkflow(text: string, options: ParseWorkflowOptions): ParsedWorkflow {
  const result = validateWorkflow(text, options);
  if (!result.workflow) throw new WorkflowValidationError(result.problems, result.warnings);
  return { workflow: result.workflow, warnings: result.warnings };
}

/**
 * Reads a `--values` file: a mapping of agent names to mappings of values, as under a
 * workflow's `values`. An empty file is no values. Throws a WorkflowValidationError.
 */
export function parseValues(text: string, options: { file: string }): ValuesMap {
  const { reader, doc } = load(text, options.file);
  let values: ValuesMap = {};
  if (reader.problems.length === 0 && doc.contents !== null) {
    values = new WorkflowSchema(reader).values(doc.contents as never, '');
  }
  if (reader.problems.length > 0) throw new WorkflowValidationError(reader.problems, reader.warnings);
  return values;
}
