import type { WorkflowParser } from './service.js';

/** The parser without a kernel (tools, tests of other plugins); loads `yaml` on first call. */
export async function loadWorkflowParser(): Promise<WorkflowParser> {
  const { createWorkflowParser } = await import('./parser.js');
  return createWorkflowParser();
}
