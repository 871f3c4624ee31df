import { describe, expect, it } from 'vitest';
import { fakeLuaFunction, luaCallContext } from '@runner/plugin-sdk/testing';
import { MetricsRegistry } from '@runner/plugin-metrics/testing';
import { createMetricsModule, recordInto, SERIES_PER_WORKFLOW, WorkflowMetrics } from './metrics.js';

/**
 * The module's bounds over the metrics plugin's real registry (prom-client): names and labels
 * checked, the series cap per workflow, a name's kind and labels fixed at first use.
 */
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

function setUp() {
  const registry = new MetricsRegistry(quiet);
  const module = createMetricsModule(recordInto(new WorkflowMetrics(registry)));
  const run = { workflow: 'deploy', runId: 'r-1', task: 't', attempt: 1, agent: 'localhost' };
  const exported = async () => (await registry.exposition()).text;
  return { registry, module, run, exported };
}

describe('the metrics Lua module', () => {
  it('exports counters, gauges and timings with the workflow label, and nothing in dry-run', async () => {
    const { module, run, exported } = setUp();
    const { call } = luaCallContext({ run });
    module.inc(call, 'deploys', { env: 'prod' });
    module.inc(call, 'deploys', { env: 'prod' }, 2);
    module.set(call, 'queue_length', 4);
    const timed = await module.time(
      call,
      'step',
      fakeLuaFunction(() => [true, 'ok']),
    );
    expect(timed).toEqual({ kind: 'lua-multiple', values: [true, 'ok'] });
    module.inc(luaCallContext({ run, dryRun: true }).call, 'deploys', { env: 'prod' });
    const text = await exported();
    expect(text).toContain('runner_workflow_deploys_total{workflow="deploy",env="prod"} 3\n');
    expect(text).toContain('runner_workflow_queue_length{workflow="deploy"} 4\n');
    expect(text).toContain('runner_workflow_step_seconds_count{workflow="deploy"} 1\n');
  });

  it('refuses bad names, labels and values with the argument named', () => {
    const { module, run } = setUp();
    const { call } = luaCallContext({ run });
    expect(() => module.inc(call, 'Bad-Name')).toThrow(/name "Bad-Name" must be lower-case/);
    expect(() => module.inc(call, 'x', { workflow: 'y' })).toThrow(/not workflow/);
    expect(() => module.inc(call, 'x', { a: 1, b: 2, c: 3, d: 4, e: 5 })).toThrow(/at most 4 labels/);
    expect(() => module.inc(call, 'x', { a: 'v'.repeat(65) })).toThrow(/longer than 64/);
    expect(() => module.inc(call, 'x', undefined, -1)).toThrow(/must not be negative/);
    expect(() => module.set(call, 'g', 'high')).toThrow(/argument 2 \(value\) must be a finite number, got string/);
    module.inc(call, 'fixed', { a: '1' });
    expect(() => module.inc(call, 'fixed', { b: '1' })).toThrow(/has the labels \{a\} \(first used so\), got \{b\}/);
    expect(() => module.set(call, 'fixed', 1, { a: '1' })).toThrow(/fixed is a counter \(first used so\), not a gauge/);
  });

  it('drops series past the per-workflow cap with a warning in the task log, other workflows unaffected', async () => {
    const { module, run, exported } = setUp();
    const { call, lines } = luaCallContext({ run });
    for (let i = 0; i <= SERIES_PER_WORKFLOW; i++) module.inc(call, 'hits', { host: `h${i}` });
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      `metrics: workflow deploy has ${SERIES_PER_WORKFLOW} series already; hits with these labels is not recorded`,
    ]);
    module.inc(luaCallContext({ run: { ...run, workflow: 'other' } }).call, 'hits', { host: 'h0' });
    const text = await exported();
    expect(text.match(/^runner_workflow_hits_total\{workflow="deploy"/gm)).toHaveLength(SERIES_PER_WORKFLOW);
    expect(text).toContain('runner_workflow_hits_total{workflow="other",host="h0"} 1\n');
  });
});

describe('the metrics registry', () => {
  it('keeps a metric to its cap of label combinations and counts what it dropped', async () => {
    const { registry, exported } = setUp();
    const gauge = registry.gauge({ name: 'plugin_queue_depth', help: 'h', labelNames: ['queue'], maxSeries: 2 });
    for (const queue of ['a', 'b', 'c']) gauge.set({ queue }, 1);
    const text = await exported();
    expect(text).not.toContain('queue="c"');
    expect(text).toContain('runner_metrics_series_dropped_total{metric="plugin_queue_depth"} 1\n');
    expect(registry.gauge({ name: 'plugin_queue_depth', help: 'h', labelNames: ['queue'] })).toBe(gauge);
    expect(() => registry.counter({ name: 'plugin_queue_depth', help: 'h' })).toThrow(/declared already as a gauge/);
    expect(() => registry.gauge({ name: 'plugin_things_total', help: 'h' })).toThrow(/only counters end in _total/);
  });
});
