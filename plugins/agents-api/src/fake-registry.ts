import {
  NotFoundError,
  RunnerError,
  type Agent,
  type AgentDisk,
  type AgentExecResult,
  type AgentLogEntry,
  type AgentMetrics,
  type AgentNetworkInterface,
  type AgentProcess,
  type AgentRegistry,
} from '@runner/plugin-sdk';

/** For tests: an agent with every field, overridable. */
export function fakeAgent(name: string, fields: Partial<Agent> = {}): Agent {
  return {
    name,
    address: '10.0.0.5:41234',
    status: 'online',
    last_heartbeat: new Date().toISOString(),
    cpu_usage: 12.5,
    memory_usage: 40.25,
    uptime: 3725,
    version: '0.1.0',
    hostname: `${name}.example`,
    os: 'linux',
    registered_at: '2025-01-01T00:00:00.000Z',
    modules: ['exec', 'file', 'facts'],
    labels: {},
    ...fields,
  };
}

export function fakeMetrics(cpu = 12.5): AgentMetrics {
  return {
    cpu: { cores: 4, usage_percent: cpu, load_avg: [0.5, 0.4, 0.3] },
    memory: { total_bytes: 8 * 1024 ** 3, used_bytes: 2 * 1024 ** 3, usage_percent: 25 },
    disk: { total_bytes: 100 * 1024 ** 3, used_bytes: 40 * 1024 ** 3, usage_percent: 40 },
    network: { rx_bytes_per_sec: 2048, tx_bytes_per_sec: 512 },
    processes: 123,
    uptime: 3725,
    collected_at: new Date().toISOString(),
  };
}

/**
 * An in-memory AgentRegistry for tests of the REST API and the CLI, following the contract:
 * NotFoundError for unknown agents, RunnerError `agent_unreachable` (503) for offline ones. It
 * records the calls it got.
 */
export class FakeRegistry implements AgentRegistry {
  readonly agents = new Map<string, Agent>();
  readonly calls: { method: string; name: string; args?: unknown[] }[] = [];
  /** Replaces exec's answer. */
  execResult: (command: string | string[]) => AgentExecResult = (command) => ({
    stdout: `ran ${JSON.stringify(command)}\n`,
    stderr: '',
    exit_code: 0,
    timed_out: false,
    duration: 0.01,
  });
  metricsValue: () => AgentMetrics = () => fakeMetrics();
  /** Open log streams: push entries with `emit`, end with `end`/`fail`. */
  readonly logStreams: {
    name: string;
    emit: (entry: AgentLogEntry) => void;
    signal: AbortSignal;
    end: () => void;
    fail: (error: Error) => void;
  }[] = [];
  private readonly listeners = new Set<(agent: Agent) => void>();
  private readonly streamWaiters: (() => void)[] = [];

  constructor(agents: Agent[] = []) {
    for (const a of agents) this.agents.set(a.name, a);
  }

  /** Adds or replaces an agent and reports the change to listeners, as the transport does. */
  change(agent: Agent): void {
    this.agents.set(agent.name, agent);
    for (const l of this.listeners) l(agent);
  }

  /** Resolves once `count` log streams are open. */
  async streamsOpened(count: number): Promise<void> {
    while (this.logStreams.length < count) await new Promise<void>((resolve) => this.streamWaiters.push(resolve));
  }

  private reachable(name: string, method: string, args?: unknown[]): Agent {
    this.calls.push({ method, name, args });
    const agent = this.agents.get(name);
    if (!agent) throw new NotFoundError(`agent "${name}" does not exist`);
    if (agent.status === 'offline') {
      throw new RunnerError(
        'agent_unreachable',
        `agent "${name}" is offline (no heartbeat since ${agent.last_heartbeat})`,
        {
          status: 503,
        },
      );
    }
    return agent;
  }

  list(): Agent[] {
    return [...this.agents.values()];
  }
  get(name: string): Agent | undefined {
    return this.agents.get(name);
  }
  async remove(name: string): Promise<void> {
    this.calls.push({ method: 'remove', name });
    const agent = this.agents.get(name);
    if (!agent) throw new NotFoundError(`agent "${name}" does not exist`);
    this.agents.delete(name);
    for (const l of this.listeners) l({ ...agent, status: 'offline' });
  }
  async revoke(name: string): Promise<Agent> {
    this.calls.push({ method: 'revoke', name });
    const agent = this.agents.get(name);
    if (!agent) throw new NotFoundError(`agent "${name}" does not exist`);
    const revoked: Agent = { ...agent, status: 'offline', revoked_at: agent.revoked_at ?? new Date().toISOString() };
    this.change(revoked);
    return revoked;
  }
  async metrics(name: string): Promise<AgentMetrics> {
    this.reachable(name, 'metrics');
    return this.metricsValue();
  }
  async processes(name: string): Promise<AgentProcess[]> {
    this.reachable(name, 'processes');
    return [{ pid: 1, name: 'init', command: '/sbin/init', cpu_percent: 0.1, memory_bytes: 4096, user: 'root' }];
  }
  async network(name: string): Promise<AgentNetworkInterface[]> {
    this.reachable(name, 'network');
    return [
      { name: 'eth0', addresses: ['10.0.0.5'], rx_bytes: 10, tx_bytes: 20, rx_bytes_per_sec: 1, tx_bytes_per_sec: 2 },
    ];
  }
  async disks(name: string): Promise<AgentDisk[]> {
    this.reachable(name, 'disks');
    return [{ mount: '/', fs_type: 'ext4', total_bytes: 100, used_bytes: 40, usage_percent: 40 }];
  }
  async exec(
    name: string,
    command: string | string[],
    options?: { timeoutMs?: number; cwd?: string },
  ): Promise<AgentExecResult> {
    this.reachable(name, 'exec', [command, options]);
    return this.execResult(command);
  }
  async restart(name: string): Promise<void> {
    this.reachable(name, 'restart');
  }
  async stop(name: string): Promise<void> {
    this.reachable(name, 'stop');
  }
  streamLogs(name: string, onEntry: (entry: AgentLogEntry) => void, signal: AbortSignal): Promise<void> {
    try {
      this.reachable(name, 'streamLogs');
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      signal.addEventListener('abort', () => resolve(), { once: true });
      this.logStreams.push({ name, emit: onEntry, signal, end: resolve, fail: reject });
      for (const wake of this.streamWaiters.splice(0)) wake();
    });
  }
  onChange(listener: (agent: Agent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
