// Only modules that do not load `yaml` are re-exported here (see src/plugin.ts); parsing itself is
// reached through the WorkflowParser service, or `loadWorkflowParser` outside a kernel.
export { plugin } from './src/plugin.js';
export { WorkflowParserRef, type WorkflowParser } from './src/service.js';
export { loadWorkflowParser } from './src/load.js';
export { WorkflowValidationError, formatProblem } from '@runner/plugin-sdk';
export { parseDuration, formatDuration } from './src/duration.js';
export { selectGroup, topologicalOrder, findCycles, dependencyClosure, describeCycle } from './src/graph.js';
export type { GraphNode, DependencyCycle } from './src/graph.js';
export { applyOverrides, parseVarArguments, mergeValues } from './src/overrides.js';
export { TEMPLATE_ROOTS, TASK_NAME, VAR_NAME } from './src/names.js';
export { conditionHolds } from './src/template-syntax.js';
export type * from './src/types.js';
