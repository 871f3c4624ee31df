import { createServiceRef } from './service-ref.js';

/**
 * Metrics for scrapers (issue 21), provided by the metrics plugin. Plugins declare their counters,
 * gauges and histograms through this service and never import prom-client: the plugin owns the
 * registry and its `/metrics` exposition (Prometheus text format).
 *
 * Bounded by construction: label names are fixed when the metric is declared, and each metric keeps
 * at most `maxSeries` label combinations (default 1,000); a new combination beyond the cap is dropped
 * and counted in `runner_metrics_series_dropped_total{metric}`. Label values must therefore come from
 * bounded sets (workflow names, agent names, statuses, routes), never ids of runs, tasks or events.
 */

/** `runner_events_pending`: snake_case, starting with a letter; `_total` ends counters only. */
export const METRIC_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
/** Label names follow the metric name rule; names starting `__` are Prometheus' own. */
export const METRIC_LABEL_PATTERN = /^[a-z][a-z0-9_]*$/;
/** Label combinations a metric keeps unless its declaration says otherwise. */
export const DEFAULT_MAX_SERIES = 1000;

/** Label values of one observation; a label left out is exported as the empty string. */
export type MetricLabels<L extends string> = Partial<Record<L, string | number>>;

interface MetricDefinitionBase<L extends string> {
  /** Full exported name (METRIC_NAME_PATTERN), prefixed by its owner: `runner_hook_duration_seconds`. */
  name: string;
  /** One line for the `# HELP` comment. */
  help: string;
  /** Fixed label names (METRIC_LABEL_PATTERN); none by default. */
  labelNames?: readonly L[];
  /** Label combinations kept (DEFAULT_MAX_SERIES); beyond it new combinations are dropped and counted. */
  maxSeries?: number;
}

export type CounterDefinition<L extends string> = MetricDefinitionBase<L>;

export interface GaugeDefinition<L extends string> extends MetricDefinitionBase<L> {
  /**
   * Called at every scrape before the gauge is exported, to set values read from their owner (a
   * queue's depth from an index): keep it cheap, a scrape waits for it. A rejection is logged and
   * the gauge keeps its last values.
   */
  collect?: (gauge: MetricGauge<L>) => void | Promise<void>;
}

export interface HistogramDefinition<L extends string> extends MetricDefinitionBase<L> {
  /** Upper bounds in the metric's unit (seconds for `_seconds`); Prometheus' defaults when absent. */
  buckets?: readonly number[];
}

export interface MetricCounter<L extends string = string> {
  /** Adds `value` (1 by default; must not be negative). */
  inc(labels?: MetricLabels<L>, value?: number): void;
}

export interface MetricGauge<L extends string = string> {
  set(labels: MetricLabels<L>, value: number): void;
  inc(labels?: MetricLabels<L>, value?: number): void;
  dec(labels?: MetricLabels<L>, value?: number): void;
  /** Forgets every label combination (before a collect sets the current ones, so gone ones vanish). */
  reset(): void;
}

/**
 * A gauge with one series per member of a large set that changes a member at a time (an agent's
 * CPU, set at each heartbeat): each series is set when its value changes and removed when its
 * member goes, and its exposition line is kept written, so a scrape of thousands of them is a join
 * rather than a formatting pass (see `MetricsService.keyedGauge`).
 */
export interface KeyedGaugeDefinition {
  /** Full exported name (METRIC_NAME_PATTERN), not ending in `_total`. */
  name: string;
  help: string;
  /** The one label naming the member (METRIC_LABEL_PATTERN): `agent`. */
  label: string;
  /** Members kept (DEFAULT_MAX_SERIES); a new one beyond it is dropped and counted. */
  maxSeries?: number;
}

export interface MetricKeyedGauge {
  /** The member's value (its label value is cut like any label value). */
  set(key: string, value: number): void;
  /** Forgets the member's series (it left). */
  remove(key: string): void;
}

export interface MetricHistogram<L extends string = string> {
  observe(labels: MetricLabels<L>, value: number): void;
  /** Starts a clock; calling the function it returns observes the seconds elapsed and returns them. */
  startTimer(labels?: MetricLabels<L>): (moreLabels?: MetricLabels<L>) => number;
}

/**
 * Declares metrics. Declaring a name again with the same kind and label names returns the metric
 * already declared (a plugin restarted in one process keeps its series); another kind or other
 * label names throw an InvalidInputError, as does a name or label name breaking the patterns.
 */
export interface MetricsService {
  counter<L extends string = never>(definition: CounterDefinition<L>): MetricCounter<L>;
  gauge<L extends string = never>(definition: GaugeDefinition<L>): MetricGauge<L>;
  histogram<L extends string = never>(definition: HistogramDefinition<L>): MetricHistogram<L>;
  /** A gauge of one series per member of a large set, each set or removed on its own (KeyedGaugeDefinition). */
  keyedGauge(definition: KeyedGaugeDefinition): MetricKeyedGauge;
}

export const MetricsRef = createServiceRef<MetricsService>({
  id: 'metrics',
  description: 'counters, gauges and histograms exported at /metrics for scrapers (metrics plugin)',
});

/** One observation of the Lua `metrics` module, its arguments checked (module-metrics). */
export interface WorkflowObservation {
  kind: 'counter' | 'gauge' | 'histogram';
  /** The script's name (`deploys`), not the exported one (`runner_workflow_deploys_total`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Where workflows' observations are kept and exported (module-metrics, where MetricsRef is). */
export interface WorkflowMetricsSink {
  /** Records it for `workflow`; a string says why it was dropped (a cap), for the task's log. */
  record(observation: WorkflowObservation, workflow: string): string | undefined;
}

/**
 * The master's side of the local executor (engine plugin): observations its scripts make there
 * arrive here and go to the sink module-metrics attaches, since the executor exports nothing.
 */
export interface WorkflowMetricsRelay {
  attach(sink: WorkflowMetricsSink): void;
}

export const WorkflowMetricsRelayRef = createServiceRef<WorkflowMetricsRelay>({
  id: 'metrics.executor-relay',
  description: "the master's receiver of workflow metrics made in its local executor (engine plugin)",
});

/** The local executor's way to its master's workflow metrics (executor plugin); one-way. */
export interface WorkflowMetricsForwarder {
  forward(observation: WorkflowObservation, run: { runId: string; task: string }): void;
}

export const WorkflowMetricsForwarderRef = createServiceRef<WorkflowMetricsForwarder>({
  id: 'metrics.forwarder',
  description: "the local executor's way to the master's workflow metrics (executor plugin)",
});
