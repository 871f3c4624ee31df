import {
  HttpRouterRef,
  LuaRuntimeRef,
  StoreRef,
  TemplateEngineRef,
  WorkflowEngineRef,
  AgentDelegatorRef,
  definePlugin,
  InvalidInputError,
  optional,
  type RunnerConfig,
} from '@runner/plugin-sdk';
import { WorkflowParserRef } from '@runner/plugin-workflow';
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
  commands: [runCommand],
  async setup(ctx, { parser, runtime, template, store, http, delegator }) {
    const [{ createEngine }, { RunStore, DEFAULT_RESULT_BYTES }, { registerRoutes }] = await Promise.all([
      import('./engine.js'),
      import('./run-store.js'),
      import('./routes.js'),
    ]);
    const runs = new RunStore(
      store,
      positiveBytes(ctx.config, 'engine.task_result_bytes', DEFAULT_RESULT_BYTES),
      ctx.redactor,
    );
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
      taskLogBytes: positiveBytes(ctx.config, 'engine.task_log_bytes', 256 * 1024),
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

function positiveBytes(config: RunnerConfig, key: string, fallback: number): number {
  const value = config.get(key, fallback);
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidInputError(
      `config ${key} (from ${config.sourceOf(key)}): expected a positive number of bytes, got ${value}`,
      {
        field: key,
      },
    );
  }
  return value;
}
