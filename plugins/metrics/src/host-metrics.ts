import { HostSampler, type MetricsService } from '@runner/plugin-sdk';

/**
 * An agent's own flow_agent_* gauges (service.md section 4), for its listener (agent.metrics_port):
 * the same names and label the master exports for it, read from this host at each scrape with
 * the sampler the agent's metrics object uses.
 */
export function watchHost(metrics: MetricsService, agentName: string, diskPath: string): void {
  const sampler = new HostSampler({ diskPath });
  sampler.prime();
  let sample: ReturnType<HostSampler['sample']> | undefined;
  // The three gauges are collected one after another in one scrape: one sample serves them all.
  const read = () => {
    sample ??= sampler.sample().finally(() => setTimeout(() => (sample = undefined), 1000).unref());
    return sample;
  };
  const labels = { agent: agentName };
  metrics.gauge({
    name: 'flow_agent_cpu_usage_percent',
    help: "this agent's CPU use in percent",
    labelNames: ['agent'],
    collect: async (gauge) => gauge.set(labels, (await read()).cpu.usage_percent),
  });
  metrics.gauge({
    name: 'flow_agent_memory_usage_bytes',
    help: "this agent's used memory in bytes",
    labelNames: ['agent'],
    collect: async (gauge) => gauge.set(labels, (await read()).memory.used_bytes),
  });
  metrics.gauge({
    name: 'flow_agent_disk_usage_bytes',
    help: "this agent's used disk in bytes (the file system of its data directory)",
    labelNames: ['agent'],
    collect: async (gauge) => gauge.set(labels, (await read()).disk.used_bytes),
  });
}
