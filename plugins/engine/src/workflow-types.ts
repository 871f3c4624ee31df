// The workflow definition types, as the workflow plugin's parser produces them. Type-only: the
// engine reaches the parser through its service, never through its files at run time.
export type { LoopItem, TaskDefinition, WorkflowDefinition, RetryPolicy } from '@runner/plugin-workflow';
