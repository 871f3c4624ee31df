// Helpers for this plugin's tests: a real master on an ephemeral loopback port, and real agent
// clients (the agent plugin's client) connected to it over gRPC.
import type { Agent, BusEvent, EventType, Logger, RunnerEvents, StateService, Store } from '@runner/plugin-sdk';
import { AgentClient, type AgentClientOptions, type AgentHandlers } from '@runner/plugin-agent/client';
import type { MasterTransportConfig } from './config.js';
import { AgentMaster } from './master.js';
import { JoinTokens } from './token.js';

export const TOKEN = 'rjt_test-token';

export interface Recorded {
  lines: { level: string; message: string; fields?: Record<string, unknown> }[];
  events: BusEvent[];
}

export function recordingLogger(into: Recorded['lines']): Logger {
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void into.push({ level, message, fields });
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

export function masterConfig(overrides: Partial<MasterTransportConfig> = {}): MasterTransportConfig {
  return {
    port: 0,
    bindAddress: '127.0.0.1',
    heartbeatIntervalMs: 100,
    heartbeatTimeoutMs: 600,
    warningThreshold: 80,
    registerTimeoutMs: 2000,
    callTimeoutMs: 5000,
    persistIntervalMs: 200,
    maxMessageBytes: 4 * 1024 * 1024,
    logTail: 100,
    ...overrides,
  };
}

export interface TestMaster {
  master: AgentMaster;
  address: string;
  recorded: Recorded;
  /** Resolves with the first event of `type` (for `agent`) from now on, or one already emitted. */
  event<K extends EventType>(type: K, agent?: string): Promise<RunnerEvents[K]>;
  /** Resolves once the registry shows the agent in this status. */
  status(name: string, status: Agent['status']): Promise<Agent>;
}

export async function startMaster(
  options: {
    config?: Partial<MasterTransportConfig>;
    store?: Store;
    state?: StateService;
    token?: string;
    tokenFile?: string;
  } = {},
): Promise<TestMaster> {
  const recorded: Recorded = { lines: [], events: [] };
  const waiters = new Set<(event: BusEvent) => void>();
  const master = new AgentMaster({
    config: masterConfig(options.config),
    logger: recordingLogger(recorded.lines),
    tokens: new JoinTokens(
      options.tokenFile ? undefined : (options.token ?? TOKEN),
      options.tokenFile ?? '/nonexistent/agent-token',
    ),
    version: '0.0.0-test',
    store: options.store,
    state: options.state,
    events: {
      emit: (type, data) => {
        const event = { type, data, timestamp: Date.now() } as BusEvent;
        recorded.events.push(event);
        for (const waiter of waiters) waiter(event);
      },
    },
  });
  const { port } = await master.listen();
  return {
    master,
    address: `127.0.0.1:${port}`,
    recorded,
    event: (type, agent) =>
      new Promise((resolve) => {
        const matches = (event: BusEvent) =>
          event.type === type && (agent === undefined || (event.data as { agent_name?: string }).agent_name === agent);
        const earlier = recorded.events.find(matches);
        if (earlier) return resolve(earlier.data as never);
        const waiter = (event: BusEvent) => {
          if (!matches(event)) return;
          waiters.delete(waiter);
          resolve(event.data as never);
        };
        waiters.add(waiter);
      }),
    status: (name, status) =>
      new Promise((resolve) => {
        const current = master.registry.get(name);
        if (current?.status === status) return resolve(current);
        const off = master.registry.onChange((agent) => {
          if (agent.name === name && agent.status === status) {
            off();
            resolve(agent);
          }
        });
      }),
  };
}

/** Handlers that answer everything at once; override what a test needs. */
export function stubHandlers(overrides: Partial<AgentHandlers> = {}): AgentHandlers {
  return {
    runTask: async () => ({ success: true, message: '', outputs_json: '' }),
    metrics: async () => ({
      metrics: {
        cpu: { cores: 2, usage_percent: 12.5, load_avg: [0.5, 0.4, 0.3] },
        memory: { total_bytes: 1000, used_bytes: 250, usage_percent: 25 },
        disk: { total_bytes: 2000, used_bytes: 1000, usage_percent: 50 },
        network: { rx_bytes_per_sec: 10, tx_bytes_per_sec: 20 },
        processes: 42,
        uptime: 12.7,
        collected_at: new Date().toISOString(),
      },
      processes: [],
      network: [],
      disks: [],
    }),
    usage: () => ({ cpu_percent: 10, memory_percent: 20, disk_percent: 30, uptime: 5 }),
    exec: async () => ({ stdout: '', stderr: '', exit_code: 0, exited: true, timed_out: false, duration: 0 }),
    logs: () => ({ recent: [] }),
    control: () => {},
    ...overrides,
  };
}

export function startClient(
  address: string,
  name: string,
  options: Partial<Omit<AgentClientOptions, 'handlers'>> & {
    handlers?: Partial<AgentHandlers>;
    lines?: Recorded['lines'];
  } = {},
): AgentClient {
  const { handlers, lines, ...rest } = options;
  const client = new AgentClient({
    name,
    master: address,
    token: TOKEN,
    version: '0.0.0-test',
    hostname: 'test-host',
    os: 'linux test',
    uptime: () => 1,
    modules: () => ['exec', 'log'],
    connectTimeoutMs: 2000,
    reconnect: {
      initialDelayMs: 50,
      maxDelayMs: 200,
      multiplier: 2,
      jitter: 0,
      maxRetries: 0,
      breakerFailures: 0,
      breakerResetMs: 1000,
    },
    logger: recordingLogger(lines ?? []),
    handlers: stubHandlers(handlers),
    ...rest,
  });
  client.start();
  return client;
}

/** Resolves at the client's next registration (or at once when it is registered). */
export function registered(client: AgentClient): Promise<void> {
  return new Promise((resolve) => {
    if (client.state === 'registered') return resolve();
    const off = client.onRegistered(() => {
      off();
      resolve();
    });
  });
}
