import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './registry.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet } as never;
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

/** The exposition's lines of one metric (its HELP and TYPE included). */
async function linesOf(registry: MetricsRegistry, name: string): Promise<string[]> {
  const { text } = await registry.exposition();
  return text.split('\n').filter((line) => line.includes(` ${name} `) || line.startsWith(name));
}

describe('a keyed gauge', () => {
  it('exports each member set, with its latest value, and forgets a removed one', async () => {
    const registry = new MetricsRegistry(quiet);
    const cpu = registry.keyedGauge({ name: 'flow_agent_cpu_usage_percent', help: 'CPU in %', label: 'agent' });
    cpu.set('a1', 12.5);
    cpu.set('a2', 40);
    cpu.set('a1', 80);
    expect(await linesOf(registry, 'flow_agent_cpu_usage_percent')).toEqual([
      '# HELP flow_agent_cpu_usage_percent CPU in %',
      '# TYPE flow_agent_cpu_usage_percent gauge',
      'flow_agent_cpu_usage_percent{agent="a1"} 80',
      'flow_agent_cpu_usage_percent{agent="a2"} 40',
    ]);
    cpu.remove('a1');
    expect(await linesOf(registry, 'flow_agent_cpu_usage_percent')).toEqual([
      '# HELP flow_agent_cpu_usage_percent CPU in %',
      '# TYPE flow_agent_cpu_usage_percent gauge',
      'flow_agent_cpu_usage_percent{agent="a2"} 40',
    ]);
  });

  it('escapes label values and help, writes special values as Prometheus does, and counts members past its cap', async () => {
    const registry = new MetricsRegistry(quiet);
    const gauge = registry.keyedGauge({ name: 'x_bytes', help: 'a \\ and\na line', label: 'agent', maxSeries: 2 });
    gauge.set('say "hi"\\\n', Infinity);
    gauge.set('nan', NaN);
    gauge.set('third', 3);
    const { text } = await registry.exposition();
    expect(text).toContain('# HELP x_bytes a \\\\ and\\na line\n');
    expect(text).toContain('x_bytes{agent="say \\"hi\\"\\\\\\n"} +Inf\n');
    expect(text).toContain('x_bytes{agent="nan"} NaN\n');
    expect(text).not.toContain('third');
    expect(text).toContain('runner_metrics_series_dropped_total{metric="x_bytes"} 1');
  });

  it('is one metric per name: declaring it again returns it, another kind of that name is refused', () => {
    const registry = new MetricsRegistry(quiet);
    const first = registry.keyedGauge({ name: 'y_percent', help: 'y', label: 'agent' });
    expect(registry.keyedGauge({ name: 'y_percent', help: 'y', label: 'agent' })).toBe(first);
    expect(() => registry.gauge({ name: 'y_percent', help: 'y', labelNames: ['agent'] })).toThrow(/keyed gauge/);
  });

  it.runIf(hasPromtool)('keeps the exposition valid for promtool beside prom-client metrics', async () => {
    const registry = new MetricsRegistry(quiet);
    registry.counter({ name: 'z_total', help: 'z' }).inc();
    const gauge = registry.keyedGauge({ name: 'z_bytes', help: 'z bytes', label: 'agent' });
    for (let i = 0; i < 3; i++) gauge.set(`agent-${i}`, i * 1024);
    registry.keyedGauge({ name: 'z_empty_bytes', help: 'none yet', label: 'agent' });
    const checked = spawnSync('promtool', ['check', 'metrics'], {
      input: (await registry.exposition()).text,
      encoding: 'utf8',
    });
    expect(checked.stderr + checked.stdout).toBe('');
    expect(checked.status).toBe(0);
  });
});
