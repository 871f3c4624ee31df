import {
  createServiceRef,
  definePlugin,
  EXECUTOR_COMMAND,
  LuaRuntimeRef,
  MasterCallForwarderRef,
  RunnerError,
  StateForwarderRef,
  WorkflowMetricsForwarderRef,
  type CommandSpec,
} from '@runner/plugin-sdk';
import type { ExecutorServer } from './serve.js';

const ExecutorServerRef = createServiceRef<ExecutorServer>({
  id: 'executor.server',
  description: "the local executor's side of its channel to the master",
});

/**
 * `runner executor`: started by a master (engine.run_as), never by hand. It boots the `executor`
 * profile (the Lua runtime and the modules, no store, no HTTP, no data directory) and serves the
 * master's local tasks over the IPC channel the master opened, until that channel closes.
 */
const executorCommand: CommandSpec = {
  name: EXECUTOR_COMMAND,
  description: 'internal: run local task scripts for a master, as its unprivileged user (started by the master)',
  run: async (_input, ctx) => {
    if (!process.send) {
      throw new RunnerError(
        'invalid_input',
        'runner executor is started by a master to run its local tasks (engine.run_as); it has no channel to one here',
      );
    }
    const kernel = await ctx.boot('executor', {});
    await kernel.get(ExecutorServerRef).serve();
    return 0;
  },
};

export const plugin = definePlugin({
  id: 'executor',
  version: '0.1.0',
  description: "The local executor: runs a master's local task scripts that have side effects, as an unprivileged user",
  profiles: ['executor'],
  provides: [ExecutorServerRef, StateForwarderRef, MasterCallForwarderRef, WorkflowMetricsForwarderRef],
  dependsOn: { runtime: LuaRuntimeRef },
  commands: [executorCommand],
  async setup(ctx, { runtime }) {
    const { ExecutorServer } = await import('./serve.js');
    const server = new ExecutorServer(runtime, process);
    ctx.provide(ExecutorServerRef, server);
    // state.* of the tasks run here is asked of the master, which answers from its store.
    ctx.provide(StateForwarderRef, server);
    // Other modules whose calls need the master (ssh.*: its profiles' credentials) go the same way.
    ctx.provide(MasterCallForwarderRef, server.calls);
    // metrics.* of the tasks run here is exported by the master (module-metrics).
    ctx.provide(WorkflowMetricsForwarderRef, server.metrics);
    return { stop: () => server.stop() };
  },
});
