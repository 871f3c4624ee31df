// The service's interface and ref live in the SDK (plugin-sdk/src/workflow.ts).
export { WorkflowParserRef, type WorkflowParser } from '@runner/plugin-sdk';
