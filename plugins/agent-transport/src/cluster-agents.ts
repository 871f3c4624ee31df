import { randomBytes } from 'node:crypto';
import {
  isRunnerError,
  RunnerError,
  type Agent,
  type AgentDelegator,
  type AgentFacts,
  type AgentLogEntry,
  type AgentRegistry,
  type AgentTerminals,
  type Cluster,
  type DelegatedResult,
  type DelegatedTask,
  type Logger,
  type TaskLogLine,
} from '@runner/plugin-sdk';
import { ClusterTerminals, type AgentHolders } from './cluster-terminals.js';

/** An agent connected to another master, as that master last announced it. */
interface Elsewhere {
  master: string;
  agent: Agent;
  facts?: AgentFacts;
}

/** What another master's calls may ask of an agent connected here. */
const CALLS = ['metrics', 'processes', 'network', 'disks', 'exec', 'restart', 'stop', 'remove', 'revoke'] as const;
type Call = (typeof CALLS)[number];

/** An online agent is announced again at most this often for metrics alone (status changes go at once). */
const ANNOUNCE_EVERY_MS = 5_000;
/** While a task or a log stream runs on another master, how often that master is checked alive. */
const OWNER_CHECK_MS = 5_000;
const CALL_TIMEOUT_MS = 30_000;

/**
 * Agents across the masters sharing the store: each master announces the agents connected to it
 * (and answers a roll call at start), and the registry and delegator it provides reach an agent
 * connected to another master through that master (cluster requests; a task's log lines and a log
 * stream's entries come back as messages). A call to a master that does not answer is a 503
 * naming it.
 */
export class ClusterAgents implements AgentHolders {
  private readonly elsewhere = new Map<string, Elsewhere>();
  private readonly announced = new Map<string, { status: string; at: number }>();
  /** Log lines of tasks (and entries of log streams) run for this master elsewhere, by id. */
  private readonly streams = new Map<string, (line: unknown) => void>();
  /** Tasks and streams this master runs for others, by id: how to stop each. */
  private readonly serving = new Map<string, AbortController>();
  private readonly offs: (() => void)[] = [];
  readonly registry: AgentRegistry;
  readonly delegator: AgentDelegator;
  readonly terminals: ClusterTerminals;

  constructor(
    private readonly cluster: Cluster,
    private readonly local: { registry: AgentRegistry; delegator: AgentDelegator; terminals: AgentTerminals },
    private readonly logger: Logger,
  ) {
    this.registry = this.wrapRegistry();
    this.delegator = this.wrapDelegator();
    this.terminals = new ClusterTerminals(cluster, local.terminals, this);
  }

  /** Announces this master's agents from now on, asks the others for theirs, answers their calls. */
  start(): void {
    const { cluster, local } = this;
    this.offs.push(
      local.registry.onChange((agent) => this.announce(agent)),
      cluster.subscribe<{ agent: Agent; facts?: AgentFacts }>('agents.here', ({ agent, facts }, from) => {
        if (!local.delegator.isAvailable(agent.name)) this.elsewhere.set(agent.name, { master: from, agent, facts });
      }),
      cluster.subscribe<{ name: string }>('agents.gone', ({ name }, from) => {
        if (this.elsewhere.get(name)?.master === from) this.elsewhere.delete(name);
      }),
      cluster.subscribe('agents.roll-call', (_message, from) => {
        for (const agent of local.registry.list()) if (agent.status !== 'offline') this.announce(agent, from);
      }),
      cluster.subscribe<{ id: string; line: unknown }>('agents.stream', ({ id, line }) => this.streams.get(id)?.(line)),
      cluster.subscribe<{ id: string }>('agents.stop', ({ id }) => this.serving.get(id)?.abort()),
      cluster.handle('agents.call', (p: { name: string; call: Call; args: unknown[] }) => this.serveCall(p)),
      cluster.handle('agents.execute', (p: { id: string; name: string; task: DelegatedTask }, from) =>
        this.serveTask(p, from),
      ),
      cluster.handle('agents.logs', (p: { id: string; name: string }, from) => this.serveLogs(p, from)),
      ...this.terminals.start(),
    );
    cluster.publish('agents.roll-call', null);
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off();
    for (const controller of this.serving.values()) controller.abort();
    this.terminals.stop();
  }

  /** The master holding an agent this master has no session with; undefined when none does. */
  holder(name: string): string | undefined {
    if (this.local.delegator.isAvailable(name)) return undefined;
    return this.elsewhere.get(name)?.master;
  }

  private announce(agent: Agent, to?: string): void {
    const online = agent.status !== 'offline';
    const last = this.announced.get(agent.name);
    const now = Date.now();
    if (to === undefined && last?.status === agent.status && now - last.at < ANNOUNCE_EVERY_MS) return;
    this.announced.set(agent.name, { status: agent.status, at: now });
    if (online) {
      this.elsewhere.delete(agent.name);
      this.cluster.publish('agents.here', { agent, facts: this.local.delegator.agent(agent.name) }, { to });
    } else this.cluster.publish('agents.gone', { name: agent.name }, { to });
  }

  private wrapRegistry(): AgentRegistry {
    const { registry } = this.local;
    const shown = (agent: Agent | undefined, name: string): Agent | undefined => {
      const there = this.elsewhere.get(name);
      return there && (agent === undefined || agent.status === 'offline') ? there.agent : agent;
    };
    const call =
      <R>(method: Call) =>
      async (name: string, ...args: unknown[]): Promise<R> => {
        const holder = this.holder(name);
        const own = registry[method] as (name: string, ...rest: unknown[]) => Promise<R>;
        if (holder === undefined) return own.call(registry, name, ...args);
        const answer = await this.ask<R>(holder, 'agents.call', { name, call: method, args }, name);
        // The record here goes too (the holder changed the shared tables already).
        if ((method === 'remove' || method === 'revoke') && registry.get(name))
          await own.call(registry, name, ...args).catch(() => undefined);
        return answer;
      };
    return {
      list: () => {
        const agents = new Map(registry.list().map((agent) => [agent.name, agent]));
        for (const name of this.elsewhere.keys()) agents.set(name, shown(agents.get(name), name) as Agent);
        return [...agents.values()].sort((a, b) => a.name.localeCompare(b.name));
      },
      get: (name) => shown(registry.get(name), name),
      remove: call('remove'),
      revoke: call('revoke'),
      metrics: call('metrics'),
      processes: call('processes'),
      network: call('network'),
      disks: call('disks'),
      exec: call('exec'),
      restart: call('restart'),
      stop: call('stop'),
      streamLogs: (name, onEntry, signal) => {
        const holder = this.holder(name);
        if (holder === undefined) return registry.streamLogs(name, onEntry, signal);
        return this.follow(holder, 'agents.logs', { name }, name, signal, (entry) => onEntry(entry as AgentLogEntry));
      },
      onChange: (listener) => registry.onChange(listener),
    };
  }

  private wrapDelegator(): AgentDelegator {
    const { delegator } = this.local;
    return {
      agent: (name) =>
        delegator.isAvailable(name)
          ? delegator.agent(name)
          : (this.elsewhere.get(name)?.facts ?? delegator.agent(name)),
      names: () => [...new Set([...(delegator.names?.() ?? []), ...this.elsewhere.keys()])],
      isAvailable: (name) => delegator.isAvailable(name) || this.elsewhere.has(name),
      execute: async (name, task, { signal, onLog }): Promise<DelegatedResult> => {
        const holder = this.holder(name);
        if (holder === undefined) return delegator.execute(name, task, { signal, onLog });
        return this.follow(holder, 'agents.execute', { name, task }, name, signal, (line) =>
          onLog(line as TaskLogLine),
        );
      },
    };
  }

  /** A request to `holder` that streams (task log lines, log entries) until it answers. */
  private async follow<R>(
    holder: string,
    kind: string,
    payload: Record<string, unknown>,
    agent: string,
    signal: AbortSignal,
    onLine: (line: unknown) => void,
  ): Promise<R> {
    const id = randomBytes(8).toString('hex');
    this.streams.set(id, onLine);
    const stop = () => this.cluster.publish('agents.stop', { id }, { to: holder });
    signal.addEventListener('abort', stop, { once: true });
    let lost: (error: Error) => void = () => undefined;
    const gone = new Promise<never>((_resolve, reject) => (lost = reject));
    // A task may run for hours: the request has no ceiling, the holder's heartbeat is watched instead.
    const check = setInterval(() => {
      this.cluster.isAlive(holder).then(
        (alive) => alive || lost(this.unreachable(agent, holder, 'died')),
        () => undefined,
      );
    }, OWNER_CHECK_MS);
    try {
      return await Promise.race([this.ask<R>(holder, kind, { ...payload, id }, agent, 2 ** 31 - 1), gone]);
    } finally {
      clearInterval(check);
      signal.removeEventListener('abort', stop);
      this.streams.delete(id);
    }
  }

  /** A request to the master holding `agent`; a master that does not answer is `agent_unreachable`. */
  async ask<R>(holder: string, kind: string, payload: unknown, agent: string, timeoutMs = CALL_TIMEOUT_MS): Promise<R> {
    try {
      return await this.cluster.request<R>(holder, kind, payload, { timeoutMs });
    } catch (error) {
      if (isRunnerError(error) && error.code === 'master_unavailable') {
        // Its agents come back on a survivor and announce themselves there.
        for (const [name, there] of this.elsewhere) if (there.master === holder) this.elsewhere.delete(name);
        throw this.unreachable(agent, holder, error.message);
      }
      throw error;
    }
  }

  unreachable(agent: string, holder: string, why: string): RunnerError {
    return new RunnerError(
      'agent_unreachable',
      `agent ${agent} is connected to master ${holder}, which ${why === 'died' ? 'died; the agent reconnects to another master' : `cannot be reached: ${why}`}`,
      { status: 503 },
    );
  }

  private async serveCall({ name, call, args }: { name: string; call: Call; args: unknown[] }): Promise<unknown> {
    if (!CALLS.includes(call)) throw new RunnerError('invalid_input', `no agent call ${call}`, { status: 400 });
    const method = this.local.registry[call] as (name: string, ...rest: unknown[]) => Promise<unknown>;
    return (await method.call(this.local.registry, name, ...args)) ?? null;
  }

  private async serveTask(
    p: { id: string; name: string; task: DelegatedTask },
    from: string,
  ): Promise<DelegatedResult> {
    const controller = new AbortController();
    this.serving.set(p.id, controller);
    try {
      return await this.local.delegator.execute(p.name, p.task, {
        signal: controller.signal,
        onLog: (line) => this.cluster.publish('agents.stream', { id: p.id, line }, { to: from }),
      });
    } finally {
      this.serving.delete(p.id);
    }
  }

  private async serveLogs(p: { id: string; name: string }, from: string): Promise<null> {
    const controller = new AbortController();
    this.serving.set(p.id, controller);
    try {
      await this.local.registry.streamLogs(
        p.name,
        (entry) => this.cluster.publish('agents.stream', { id: p.id, line: entry }, { to: from }),
        controller.signal,
      );
      return null;
    } finally {
      this.serving.delete(p.id);
    }
  }
}
