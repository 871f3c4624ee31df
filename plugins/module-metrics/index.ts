import { definePlugin, LuaModulesRef, MetricsRef, optional } from '@runner/plugin-sdk';
import { metricsModule } from './src/spec.js';

export { metricsModule } from './src/spec.js';

/**
 * The `metrics` Lua module: what workflows count, gauge and time is declared through MetricsRef
 * (the metrics plugin) and exported with the process's own metrics. Where no metrics service runs
 * (`runner run`, the local executor) the calls are checked and recorded nowhere (README).
 */
export const plugin = definePlugin({
  id: 'module-metrics',
  version: '0.1.0',
  description: 'Lua module metrics: counters, gauges and timings from workflows, exported at /metrics',
  luaModules: [metricsModule],
  dependsOn: { lua: LuaModulesRef, metrics: optional(MetricsRef) },
  async setup(_ctx, { lua, metrics }) {
    const { createMetricsModule, WorkflowMetrics } = await import('./src/metrics.js');
    lua.provide(metricsModule, createMetricsModule(metrics ? new WorkflowMetrics(metrics) : undefined));
  },
});
