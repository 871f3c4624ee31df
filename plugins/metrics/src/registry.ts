import {
  DEFAULT_MAX_SERIES,
  InvalidInputError,
  METRIC_LABEL_PATTERN,
  METRIC_NAME_PATTERN,
  type CounterDefinition,
  type GaugeDefinition,
  type HistogramDefinition,
  type KeyedGaugeDefinition,
  type Logger,
  type MetricCounter,
  type MetricGauge,
  type MetricHistogram,
  type MetricKeyedGauge,
  type MetricLabels,
  type MetricsService,
} from '@runner/plugin-sdk';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Label values longer than this are cut: a value is a name (workflow, agent, route), never a text. */
const MAX_LABEL_VALUE = 128;

const GAUGES_NAMED_AS_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

type Kind = 'counter' | 'gauge' | 'histogram' | 'keyed gauge';

interface Declared {
  kind: Kind;
  labelNames: readonly string[];
  handle: unknown;
}

/**
 * The master's (or agent's) one registry behind MetricsRef: prom-client holds the values, this
 * class holds the rules of the SDK contract (names, fixed label names, a series cap per metric).
 */
export class MetricsRegistry implements MetricsService {
  readonly registry = new Registry();
  private readonly declared = new Map<string, Declared>();
  /** The keyed gauges' written series, exported after prom-client's metrics. */
  private readonly keyed: KeyedSeries[] = [];
  private readonly dropped: Counter<'metric'>;
  private readonly lastExposition: Gauge;

  constructor(private readonly logger: Logger) {
    collectDefaultMetrics({ register: this.registry });
    // Gauges named as counters, which promtool's lint refuses; `nodejs_active_*{type}` hold the same counts.
    for (const name of GAUGES_NAMED_AS_COUNTERS) this.registry.removeSingleMetric(name);
    this.dropped = new Counter({
      name: 'runner_metrics_series_dropped_total',
      help: 'observations dropped because their metric reached its cap of label combinations',
      labelNames: ['metric'],
      registers: [this.registry],
    });
    this.lastExposition = new Gauge({
      name: 'runner_metrics_exposition_duration_seconds',
      help: 'seconds the previous exposition took in this process (collects and text), without the wait for the event loop',
      registers: [this.registry],
    });
  }

  /** The exposition in Prometheus' text format, and its content type. */
  async exposition(): Promise<{ text: string; contentType: string }> {
    const started = process.hrtime.bigint();
    const text = (await this.registry.metrics()) + this.keyed.map((family) => family.exposition()).join('');
    this.lastExposition.set(Number(process.hrtime.bigint() - started) / 1e9);
    return { text, contentType: this.registry.contentType };
  }

  counter<L extends string = never>(definition: CounterDefinition<L>): MetricCounter<L> {
    return this.declare('counter', definition, () => {
      const counter = new Counter({ ...this.base(definition) });
      const series = this.seriesCap(definition);
      return {
        inc: (labels, value = 1) => {
          const bounded = series(labels);
          if (bounded) counter.inc(bounded, value);
        },
      } satisfies MetricCounter<L>;
    });
  }

  gauge<L extends string = never>(definition: GaugeDefinition<L>): MetricGauge<L> {
    return this.declare('gauge', definition, () => {
      const series = this.seriesCap(definition);
      const { collect } = definition;
      const logger = this.logger;
      const gauge = new Gauge({
        ...this.base(definition),
        // A failing reader keeps the gauge's last values: one plugin's fault must not fail a scrape.
        ...(collect && {
          async collect() {
            try {
              await collect(handle);
            } catch (error) {
              logger.warn(`metric ${definition.name}: reading its values failed: ${(error as Error).message}`);
            }
          },
        }),
      });
      const handle: MetricGauge<L> = {
        set: (labels, value) => {
          const bounded = series(labels);
          if (bounded) gauge.set(bounded, value);
        },
        inc: (labels, value = 1) => {
          const bounded = series(labels);
          if (bounded) gauge.inc(bounded, value);
        },
        dec: (labels, value = 1) => {
          const bounded = series(labels);
          if (bounded) gauge.dec(bounded, value);
        },
        reset: () => {
          series.forget();
          gauge.reset();
        },
      };
      return handle;
    });
  }

  histogram<L extends string = never>(definition: HistogramDefinition<L>): MetricHistogram<L> {
    return this.declare('histogram', definition, () => {
      const histogram = new Histogram({
        ...this.base(definition),
        ...(definition.buckets && { buckets: [...definition.buckets] }),
      });
      const series = this.seriesCap(definition);
      const observe = (labels: MetricLabels<L> | undefined, value: number) => {
        const bounded = series(labels);
        if (bounded) histogram.observe(bounded, value);
      };
      return {
        observe,
        startTimer: (labels) => {
          const started = process.hrtime.bigint();
          return (moreLabels) => {
            const seconds = Number(process.hrtime.bigint() - started) / 1e9;
            observe({ ...labels, ...moreLabels } as MetricLabels<L>, seconds);
            return seconds;
          };
        },
      } satisfies MetricHistogram<L>;
    });
  }

  keyedGauge(definition: KeyedGaugeDefinition): MetricKeyedGauge {
    const { name, help, label, maxSeries } = definition;
    return this.declare('keyed gauge', { name, help, labelNames: [label], maxSeries }, () => {
      const family = new KeyedSeries(name, help, label, maxSeries ?? DEFAULT_MAX_SERIES, () =>
        this.dropped.inc({ metric: name }),
      );
      this.keyed.push(family);
      return { set: (key, value) => family.set(key, value), remove: (key) => family.remove(key) };
    });
  }

  private base<L extends string>(definition: CounterDefinition<L>) {
    return {
      name: definition.name,
      help: definition.help,
      labelNames: [...(definition.labelNames ?? [])] as string[],
      registers: [this.registry],
    };
  }

  /** The metric already declared under the name (same kind and labels), or a new one. */
  private declare<T>(kind: Kind, definition: CounterDefinition<string>, create: () => T): T {
    checkDefinition(kind, definition);
    const labelNames = definition.labelNames ?? [];
    const earlier = this.declared.get(definition.name);
    if (earlier) {
      if (earlier.kind !== kind || earlier.labelNames.join(',') !== labelNames.join(',')) {
        throw new InvalidInputError(
          `metric ${definition.name} is declared already as a ${earlier.kind} with labels [${earlier.labelNames.join(', ')}]`,
          { field: 'name' },
        );
      }
      return earlier.handle as T;
    }
    const handle = create();
    this.declared.set(definition.name, { kind, labelNames, handle });
    return handle;
  }

  /**
   * Turns the caller's labels into prom-client's (every declared name present, values cut to
   * MAX_LABEL_VALUE), or undefined when they name a new combination past the metric's cap.
   */
  private seriesCap<L extends string>(definition: CounterDefinition<L>) {
    const labelNames = definition.labelNames ?? [];
    const cap = definition.maxSeries ?? DEFAULT_MAX_SERIES;
    const seen = new Set<string>();
    const dropped = this.dropped;
    const bounded = (labels: MetricLabels<L> | undefined): Record<string, string> | undefined => {
      const values: Record<string, string> = {};
      for (const name of labelNames) values[name] = String(labels?.[name] ?? '').slice(0, MAX_LABEL_VALUE);
      if (labelNames.length === 0) return values;
      const key = labelNames.map((name) => values[name]).join('\u0000');
      if (!seen.has(key)) {
        if (seen.size >= cap) {
          dropped.inc({ metric: definition.name });
          return undefined;
        }
        seen.add(key);
      }
      return values;
    };
    return Object.assign(bounded, { forget: () => seen.clear() });
  }
}

/** Prometheus' text format: `\`, newline (and in label values `"`) escaped. */
const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabelValue = (text: string) => escapeHelp(text).replace(/"/g, '\\"');
/** A value as prom-client writes it. */
const valueText = (value: number) =>
  Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? String(value) : value < 0 ? '-Inf' : '+Inf';

/**
 * A keyed gauge's series, each kept as its exposition line and written again only when its value
 * changes; the exposition joins them (in the order members came) under the gauge's HELP and TYPE.
 */
class KeyedSeries {
  private readonly lines = new Map<string, string>();
  private readonly head: string;

  constructor(
    private readonly name: string,
    help: string,
    private readonly label: string,
    private readonly cap: number,
    private readonly onDropped: () => void,
  ) {
    this.head = `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} gauge\n`;
  }

  set(key: string, value: number): void {
    const member = key.slice(0, MAX_LABEL_VALUE);
    if (!this.lines.has(member) && this.lines.size >= this.cap) return this.onDropped();
    this.lines.set(member, `${this.name}{${this.label}="${escapeLabelValue(member)}"} ${valueText(value)}\n`);
  }

  remove(key: string): void {
    this.lines.delete(key.slice(0, MAX_LABEL_VALUE));
  }

  /** The gauge's part of the exposition, after prom-client's (which ends in a newline). */
  exposition(): string {
    let text = `\n${this.head}`;
    for (const line of this.lines.values()) text += line;
    return text;
  }
}

function checkDefinition(kind: Kind, definition: CounterDefinition<string>): void {
  if (!METRIC_NAME_PATTERN.test(definition.name))
    throw new InvalidInputError(`metric name "${definition.name}" must match ${METRIC_NAME_PATTERN}`, {
      field: 'name',
    });
  if (kind !== 'counter' && definition.name.endsWith('_total'))
    throw new InvalidInputError(`metric ${definition.name}: only counters end in _total`, { field: 'name' });
  for (const label of definition.labelNames ?? []) {
    if (!METRIC_LABEL_PATTERN.test(label))
      throw new InvalidInputError(
        `metric ${definition.name}: label name "${label}" must match ${METRIC_LABEL_PATTERN}`,
        {
          field: 'labelNames',
        },
      );
  }
  const cap = definition.maxSeries;
  if (cap !== undefined && (!Number.isInteger(cap) || cap < 1))
    throw new InvalidInputError(`metric ${definition.name}: maxSeries must be a positive integer`, {
      field: 'maxSeries',
    });
}
