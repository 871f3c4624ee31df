// The workflow types live in the SDK (plugin-sdk/src/workflow.ts) so that consumers need no
// dependency on this plugin; re-exported here for the parser's own modules.
import type { TemplateSyntax } from '@runner/plugin-sdk';

export type {
  SourcePosition,
  WorkflowProblem,
  RetryPolicy,
  Delegation,
  DelegationStrategy,
  LoopItem,
  TaskSource,
  TaskDefinition,
  ValuesMap,
  WorkflowDefinition,
  TemplateVariableUse,
  TemplateVariablesReader,
  ScriptChecker,
  ParseWorkflowOptions,
  ParsedWorkflow,
  WorkflowValidation,
  WorkflowOverrides,
  VarsFrom,
} from '@runner/plugin-sdk';

/** The template engine a workflow's templates are written for (the SDK's TemplateSyntax). */
export type TemplateEngine = TemplateSyntax;
