// The workflow definition types, as the workflow plugin's parser produces them (declared in the SDK).
export type { LoopItem, TaskDefinition, WorkflowDefinition, RetryPolicy } from '@runner/plugin-sdk';
