import { definePlugin } from '@runner/plugin-sdk';
import { WorkflowParserRef } from './service.js';

export const plugin = definePlugin({
  id: 'workflow',
  version: '0.1.0',
  description: 'Workflow files: YAML parsing with file positions and validation of the workflow language',
  provides: [WorkflowParserRef],
  async setup(ctx) {
    // `runner --help` imports every plugin's entry; the YAML parser loads only when a kernel boots.
    const { createWorkflowParser } = await import('./parser.js');
    ctx.provide(WorkflowParserRef, createWorkflowParser());
  },
});
