import {
  isLuaTable,
  luaMultiple,
  luaType,
  type LuaCallContext,
  type LuaFunctionRef,
  type LuaModuleImplementation,
  type LuaValue,
  type MetricCounter,
  type MetricGauge,
  type MetricHistogram,
  type MetricsService,
  type WorkflowMetricsSink,
  type WorkflowObservation,
} from '@runner/plugin-sdk';

export const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_LABELS = 4;
export const MAX_LABEL_VALUE = 64;
/** Series one workflow may hold over all its names. */
export const SERIES_PER_WORKFLOW = 100;
/** Names all workflows may declare together. */
export const MAX_NAMES = 200;

type Kind = WorkflowObservation['kind'];
type Fn = 'inc' | 'set' | 'observe' | 'time';

const EXPORTED: Record<Kind, (name: string) => string> = {
  counter: (name) => `runner_workflow_${name}_total`,
  gauge: (name) => `runner_workflow_${name}`,
  histogram: (name) => `runner_workflow_${name}_seconds`,
};

interface Declared {
  kind: Kind;
  /** The script's label names, sorted; `workflow` comes first in the export. */
  labelNames: string[];
  handle: MetricCounter<string> | MetricGauge<string> | MetricHistogram<string>;
}

/**
 * The workflows' metrics in this process: names to their kinds and label names (fixed at first
 * use), and the series each workflow holds, under the module's caps.
 */
export class WorkflowMetrics implements WorkflowMetricsSink {
  private readonly declared = new Map<string, Declared>();
  private readonly seriesOf = new Map<string, Set<string>>();

  constructor(private readonly metrics: MetricsService) {}

  /**
   * Records it; a string says why it was dropped (a cap). Kind and label names that differ from
   * the name's first use throw (the script's error).
   */
  record(observation: WorkflowObservation, workflow: string): string | undefined {
    const metric = this.metricFor(observation);
    if (typeof metric === 'string') return metric;
    const series = this.seriesOf.get(workflow) ?? new Set<string>();
    const key = `${observation.name}\u0000${metric.labelNames.map((l) => observation.labels[l]).join('\u0000')}`;
    if (!series.has(key)) {
      if (series.size >= SERIES_PER_WORKFLOW)
        return `metrics: workflow ${workflow} has ${SERIES_PER_WORKFLOW} series already; ${observation.name} with these labels is not recorded`;
      series.add(key);
      this.seriesOf.set(workflow, series);
    }
    const labels = { ...observation.labels, workflow };
    if (metric.kind === 'counter') (metric.handle as MetricCounter<string>).inc(labels, observation.value);
    else if (metric.kind === 'gauge') (metric.handle as MetricGauge<string>).set(labels, observation.value);
    else (metric.handle as MetricHistogram<string>).observe(labels, observation.value);
    return undefined;
  }

  private metricFor({ kind, name, labels }: WorkflowObservation): Declared | string {
    const labelNames = Object.keys(labels).sort();
    const earlier = this.declared.get(name);
    if (earlier) {
      if (earlier.kind !== kind)
        throw new Error(`metrics: ${name} is a ${earlier.kind} (first used so), not a ${kind}`);
      if (earlier.labelNames.join(',') !== labelNames.join(','))
        throw new Error(
          `metrics: ${name} has the labels {${earlier.labelNames.join(', ')}} (first used so), got {${labelNames.join(', ')}}`,
        );
      return earlier;
    }
    if (this.declared.size >= MAX_NAMES)
      return `metrics: ${MAX_NAMES} workflow metric names exist already; ${name} is not recorded`;
    const definition = {
      name: EXPORTED[kind](name),
      help: `workflow metric ${name} (Lua metrics module)`,
      labelNames: ['workflow', ...labelNames],
      // The per-workflow cap bounds each workflow; this bounds a name used by very many workflows.
      maxSeries: 10_000,
    };
    const handle =
      kind === 'counter'
        ? this.metrics.counter(definition)
        : kind === 'gauge'
          ? this.metrics.gauge(definition)
          : this.metrics.histogram(definition);
    const declared: Declared = { kind, labelNames, handle };
    this.declared.set(name, declared);
    return declared;
  }
}

function nameOf(fn: Fn, value: LuaValue): string {
  if (typeof value !== 'string')
    throw new Error(`metrics.${fn}: argument 1 (name) must be a string, got ${luaType(value)}`);
  if (!NAME_PATTERN.test(value))
    throw new Error(
      `metrics.${fn}: name ${JSON.stringify(value.slice(0, 80))} must be lower-case letters, digits and _, starting with a letter, at most 64 characters`,
    );
  return value;
}

function numberOf(fn: Fn, position: number, what: string, value: LuaValue, fallback?: number): number {
  if ((value === null || value === undefined) && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new Error(`metrics.${fn}: argument ${position} (${what}) must be a finite number, got ${luaType(value)}`);
  return value;
}

function labelsOf(fn: Fn, position: number, value: LuaValue): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (!isLuaTable(value) || (Array.isArray(value) && value.length > 0))
    throw new Error(
      `metrics.${fn}: argument ${position} (labels) must be a table of name = value, got ${luaType(value)}`,
    );
  const entries = Array.isArray(value) ? [] : Object.entries(value as Record<string, LuaValue>);
  if (entries.length > MAX_LABELS)
    throw new Error(`metrics.${fn}: at most ${MAX_LABELS} labels, got ${entries.length}`);
  const labels: Record<string, string> = {};
  for (const [label, labelValue] of entries) {
    if (!NAME_PATTERN.test(label) || label === 'workflow')
      throw new Error(
        `metrics.${fn}: label name ${JSON.stringify(label.slice(0, 80))} must be as a metric name (and not workflow, which is set)`,
      );
    if (typeof labelValue !== 'string' && typeof labelValue !== 'number')
      throw new Error(`metrics.${fn}: label ${label} must be a string or a number, got ${luaType(labelValue)}`);
    const text = String(labelValue);
    if (text.length > MAX_LABEL_VALUE)
      throw new Error(`metrics.${fn}: label ${label} is longer than ${MAX_LABEL_VALUE} characters`);
    labels[label] = text;
  }
  return labels;
}

/**
 * Records an observation of a script where this process keeps them: the sink where MetricsRef is
 * (a master, an agent), the master's through the executor's channel (the local executor); a
 * string says why it was dropped.
 */
export type Recorder = (call: LuaCallContext, observation: WorkflowObservation) => string | undefined;

export function recordInto(sink: WorkflowMetricsSink): Recorder {
  return (call, observation) => sink.record(observation, call.run?.workflow ?? 'repl');
}

/** The module's functions over `recorder` (undefined: checked and recorded nowhere, under `runner run`). */
export function createMetricsModule(recorder: Recorder | undefined): LuaModuleImplementation<Fn> {
  const record = (call: LuaCallContext, _fn: Fn, observation: WorkflowObservation) => {
    if (call.dryRun || !recorder) return;
    const dropped = recorder(call, observation);
    if (dropped) call.logger.warn(dropped);
  };
  return {
    inc(call, name, labels, by) {
      const value = numberOf('inc', 3, 'by', by, 1);
      if (value < 0) throw new Error('metrics.inc: argument 3 (by) must not be negative: a counter only grows');
      record(call, 'inc', { kind: 'counter', name: nameOf('inc', name), labels: labelsOf('inc', 2, labels), value });
      return undefined;
    },
    set(call, name, value, labels) {
      const observation = { name: nameOf('set', name), value: numberOf('set', 2, 'value', value) };
      record(call, 'set', { kind: 'gauge', ...observation, labels: labelsOf('set', 3, labels) });
      return undefined;
    },
    observe(call, name, seconds, labels) {
      const observation = { name: nameOf('observe', name), value: numberOf('observe', 2, 'seconds', seconds) };
      if (observation.value < 0) throw new Error('metrics.observe: argument 2 (seconds) must not be negative');
      record(call, 'observe', { kind: 'histogram', ...observation, labels: labelsOf('observe', 3, labels) });
      return undefined;
    },
    async time(call, name, fn, labels) {
      const checked = { name: nameOf('time', name), labels: labelsOf('time', 3, labels) };
      if (luaType(fn) !== 'function')
        throw new Error(`metrics.time: argument 2 (fn) must be a function, got ${luaType(fn)}`);
      const started = performance.now();
      const measure = () =>
        record(call, 'time', { kind: 'histogram', ...checked, value: (performance.now() - started) / 1000 });
      try {
        const results = await (fn as LuaFunctionRef).call();
        measure();
        return luaMultiple(...results);
      } catch (error) {
        measure();
        throw error;
      }
    },
  };
}
