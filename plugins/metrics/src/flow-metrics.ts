import type {
  Agent,
  AgentMetrics,
  AgentRegistry,
  Logger,
  MetricsService,
  RunStatus,
  WorkflowEngine,
} from '@runner/plugin-sdk';

/** Run durations from a tenth of a second to an hour (seconds). */
const RUN_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];
/** Workflows and agents are bounded sets of names; more than this many are dropped and counted. */
const NAMED_SERIES = 5000;

/** service.md exports two statuses: a run that did not succeed (failed, cancelled, interrupted) is `failed`. */
const statusLabel = (status: RunStatus) => (status === 'succeeded' ? 'success' : 'failed');

/**
 * The run metrics of service.md section 4 and the runs and tasks in flight, from the engine's run
 * taps: they hear only the runs this master executes, so with several masters each counts its
 * own and a sum over masters counts every run once.
 */
export function tapRuns(metrics: MetricsService, engine: WorkflowEngine): () => void {
  const executions = metrics.counter({
    name: 'flow_workflow_executions_total',
    help: 'workflow runs this master finished, by outcome',
    labelNames: ['status'],
  });
  const duration = metrics.histogram({
    name: 'flow_workflow_duration_seconds',
    help: 'seconds a workflow run took, from start to its end',
    labelNames: ['workflow'],
    buckets: RUN_BUCKETS,
    maxSeries: NAMED_SERIES,
  });
  const tasks = metrics.counter({
    name: 'flow_workflow_tasks_total',
    help: 'task units this master ran to an end (skipped ones too), by workflow',
    labelNames: ['workflow'],
    maxSeries: NAMED_SERIES,
  });
  // Run id to the units running in it: ids live here, never in a label.
  const inFlight = new Map<string, Set<string>>();
  metrics.gauge({
    name: 'runner_runs_in_flight',
    help: 'workflow runs this master is executing now',
    collect: (gauge) => gauge.set({}, inFlight.size),
  });
  metrics.gauge({
    name: 'runner_tasks_in_flight',
    help: 'task units running now in the runs of this master (local and delegated)',
    collect: (gauge) => {
      let units = 0;
      for (const running of inFlight.values()) units += running.size;
      gauge.set({}, units);
    },
  });
  // Both are counted at zero, so a rate over them exists before the first run fails.
  executions.inc({ status: 'success' }, 0);
  executions.inc({ status: 'failed' }, 0);

  const offs = [
    engine.runTaps.beforeRun.tap('metrics', ({ runId }) => {
      inFlight.set(runId, new Set());
    }),
    engine.runTaps.beforeTask.tap('metrics', ({ runId, unit }) => {
      inFlight.get(runId)?.add(unit);
    }),
    engine.runTaps.afterTask.tap('metrics', ({ runId, unit, workflowName }) => {
      inFlight.get(runId)?.delete(unit);
      tasks.inc({ workflow: workflowName });
    }),
    engine.runTaps.afterRun.tap('metrics', (run) => {
      inFlight.delete(run.id);
      executions.inc({ status: statusLabel(run.status) });
      duration.observe({ workflow: run.workflowName }, run.duration);
    }),
  ];
  return () => offs.forEach((off) => off());
}

export interface AgentMetricsOptions {
  /** How often each online agent is asked for its memory and disk bytes (milliseconds). */
  pollIntervalMs: number;
  logger: Logger;
}

/** Agents asked at once for their metrics object, so a thousand agents are not asked in one burst. */
const POLL_CONCURRENCY = 8;

/**
 * The agent metrics of service.md section 4. CPU comes with every heartbeat; memory and disk
 * bytes are in the agent's metrics object only, which costs a call to the agent: they are asked
 * every `pollIntervalMs`, a few agents at a time, and a scrape reads what was last answered.
 */
export function watchAgents(metrics: MetricsService, agents: AgentRegistry, options: AgentMetricsOptions): () => void {
  const connections = metrics.counter({
    name: 'flow_agent_connected_total',
    help: 'agent connections this master saw: an agent becoming online (a gauge of the connected ones is flow_agents_connected)',
  });
  connections.inc({}, 0);
  // Keyed gauges: a thousand agents' series are set as heartbeats and answers come and kept
  // written, so a scrape joins lines instead of setting and formatting 3,000 series.
  const cpu = metrics.keyedGauge({
    name: 'flow_agent_cpu_usage_percent',
    help: "an online agent's CPU use in percent, from its last heartbeat",
    label: 'agent',
    maxSeries: NAMED_SERIES,
  });
  const memory = metrics.keyedGauge({
    name: 'flow_agent_memory_usage_bytes',
    help: "an online agent's used memory in bytes",
    label: 'agent',
    maxSeries: NAMED_SERIES,
  });
  const disk = metrics.keyedGauge({
    name: 'flow_agent_disk_usage_bytes',
    help: "an online agent's used disk in bytes",
    label: 'agent',
    maxSeries: NAMED_SERIES,
  });
  const bytes = new AgentBytes(agents, options, {
    joined: () => connections.inc(),
    heartbeat: (agent) => cpu.set(agent.name, agent.cpu_usage),
    answered: (name, sample) => {
      memory.set(name, sample.memory.used_bytes);
      disk.set(name, sample.disk.used_bytes);
    },
    left: (name) => [cpu, memory, disk].forEach((gauge) => gauge.remove(name)),
  });
  metrics.gauge({
    name: 'flow_agents_connected',
    help: 'agents online now (status other than offline)',
    collect: (gauge) => gauge.set({}, bytes.onlineCount()),
  });
  return () => bytes.stop();
}

type HostBytes = Pick<AgentMetrics, 'memory' | 'disk'>;

/** What AgentBytes tells of the agents it follows. */
interface AgentWatch {
  /** An agent came online. */
  joined(): void;
  /** An online agent's status or figures changed (its heartbeat). */
  heartbeat(agent: Agent): void;
  /** An online agent answered its memory and disk bytes. */
  answered(name: string, sample: HostBytes): void;
  /** An agent went offline or was removed. */
  left(name: string): void;
}

/**
 * The online agents, followed through the registry's changes, and their memory and disk bytes,
 * asked of each every `pollIntervalMs` and a second after it comes online (not at the next round),
 * a few at a time.
 */
class AgentBytes {
  private readonly online: Set<string>;
  private readonly joined = new Set<string>();
  private joinTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly timer: NodeJS.Timeout;
  private readonly off: () => void;

  constructor(
    private readonly agents: AgentRegistry,
    private readonly options: AgentMetricsOptions,
    private readonly watch: AgentWatch,
  ) {
    const online = agents.list().filter((a) => a.status !== 'offline');
    this.online = new Set(online.map((a) => a.name));
    for (const agent of online) watch.heartbeat(agent);
    this.off = agents.onChange((agent) => {
      if (agent.status === 'offline') {
        this.online.delete(agent.name);
        watch.left(agent.name);
        return;
      }
      if (!this.online.has(agent.name)) {
        this.online.add(agent.name);
        watch.joined();
        this.askSoon(agent.name);
      }
      watch.heartbeat(agent);
    });
    this.timer = setInterval(() => void this.poll(), options.pollIntervalMs);
    this.timer.unref();
    void this.poll();
  }

  onlineCount(): number {
    return this.online.size;
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.joinTimer);
    this.off();
  }

  private askSoon(name: string): void {
    this.joined.add(name);
    this.joinTimer ??= setTimeout(() => {
      this.joinTimer = undefined;
      const names = [...this.joined];
      this.joined.clear();
      void this.ask(names);
    }, 1000).unref();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    await this.ask([...this.online]).finally(() => (this.polling = false));
  }

  private async ask(names: readonly string[]): Promise<void> {
    try {
      await inBatches(names, POLL_CONCURRENCY, async (name) => {
        const answer = await this.agents.metrics(name).catch(() => undefined);
        if (answer && this.online.has(name)) this.watch.answered(name, answer);
      });
    } catch (error) {
      this.options.logger.warn(`reading agents' metrics failed: ${(error as Error).message}`);
    }
  }
}

async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
}
