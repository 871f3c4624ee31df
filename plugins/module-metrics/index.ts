import {
  definePlugin,
  LuaModulesRef,
  MetricsRef,
  optional,
  WorkflowMetricsForwarderRef,
  WorkflowMetricsRelayRef,
} from '@runner/plugin-sdk';
import { metricsModule } from './src/spec.js';

export { metricsModule } from './src/spec.js';

/**
 * The `metrics` Lua module: what workflows count, gauge and time is declared through MetricsRef
 * (the metrics plugin) and exported with the process's own metrics. A master's local executor
 * forwards its scripts' calls to the master (the engine's relay); under `runner run` they are
 * checked and recorded nowhere (README).
 */
export const plugin = definePlugin({
  id: 'module-metrics',
  version: '0.1.0',
  description: 'Lua module metrics: counters, gauges and timings from workflows, exported at /metrics',
  luaModules: [metricsModule],
  dependsOn: {
    lua: LuaModulesRef,
    metrics: optional(MetricsRef),
    relay: optional(WorkflowMetricsRelayRef),
    forwarder: optional(WorkflowMetricsForwarderRef),
  },
  async setup(_ctx, { lua, metrics, relay, forwarder }) {
    const { createMetricsModule, recordInto, WorkflowMetrics } = await import('./src/metrics.js');
    if (metrics) {
      const sink = new WorkflowMetrics(metrics);
      relay?.attach(sink);
      lua.provide(metricsModule, createMetricsModule(recordInto(sink)));
    } else if (forwarder) {
      lua.provide(
        metricsModule,
        createMetricsModule((call, observation) => {
          if (call.run) forwarder.forward(observation, { runId: call.run.runId, task: call.run.task });
          return undefined;
        }),
      );
    } else lua.provide(metricsModule, createMetricsModule(undefined));
  },
});
