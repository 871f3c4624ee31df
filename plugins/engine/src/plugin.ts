import {
  HttpRouterRef,
  LuaRuntimeRef,
  StoreRef,
  TemplateEngineRef,
  WorkflowEngineRef,
  AgentDelegatorRef,
  definePlugin,
  optional,
} from '@runner/plugin-sdk';
import { WorkflowParserRef } from '@runner/plugin-workflow';
import { executionsCommand } from './executions-command-spec.js';
import { runCommand } from './run-command-spec.js';

/**
 * The workflow engine. Everything heavy loads in setup; the `run` command's handler loads its
 * terminal view only when it runs.
 */
export const plugin = definePlugin({
  id: 'engine',
  version: '0.1.0',
  description:
    'Runs workflows: dependency graph, parallel limit, groups, when, retry, timeout, loops, outputs, dry-run; records executions',
  profiles: ['master', 'embedded'],
  provides: [WorkflowEngineRef],
  dependsOn: {
    parser: WorkflowParserRef,
    runtime: LuaRuntimeRef,
    template: TemplateEngineRef,
    store: StoreRef,
    http: optional(HttpRouterRef),
    delegator: optional(AgentDelegatorRef),
  },
  commands: [runCommand, executionsCommand],
  config: {
    'engine.task_log_bytes': {
      schema: { type: 'integer', minimum: 1 },
      default: 256 * 1024,
      help: "bytes of a task's log kept in its run record (the rest is dropped, saying so)",
    },
    'engine.task_result_bytes': {
      schema: { type: 'integer', minimum: 1 },
      // run-store.ts DEFAULT_RESULT_BYTES, written out so the entry does not import the run store.
      default: 256 * 1024,
      help: "bytes of a task's message and outputs kept in its run record",
    },
  },
  async setup(ctx, { parser, runtime, template, store, http, delegator }) {
    const [{ createEngine }, { RunStore }, { registerRoutes }] = await Promise.all([
      import('./engine.js'),
      import('./run-store.js'),
      import('./routes.js'),
    ]);
    const runs = new RunStore(store, ctx.config.get<number>('engine.task_result_bytes'), ctx.redactor);
    await runs.migrate();
    const engine = createEngine({
      parser,
      runtime,
      template,
      runs,
      delegator,
      events: ctx.events,
      logger: ctx.logger,
      signal: ctx.signal,
      taskLogBytes: ctx.config.get<number>('engine.task_log_bytes'),
    });
    ctx.provide(WorkflowEngineRef, engine);
    if (http) registerRoutes(http, engine);
    // Runs still going when the kernel stops were cancelled through ctx.signal; wait for them to
    // record that before the store closes.
    ctx.onStop(async () => {
      await Promise.allSettled(engine.active());
      await runs.flush();
    });
  },
});
