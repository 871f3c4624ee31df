import { createServiceRef } from './service-ref.js';

/** online: heartbeating; warning: a resource above 80%; error: the agent reports a failure; offline: silent past the timeout. */
export type AgentStatus = 'online' | 'offline' | 'warning' | 'error';

/** An agent as the master knows it (service.md section 2, Agent). */
export interface Agent {
  name: string;
  /** `host:port` the agent connected from. */
  address: string;
  status: AgentStatus;
  /** ISO 8601 UTC. */
  last_heartbeat: string;
  /** Percent. */
  cpu_usage: number;
  /** Percent. */
  memory_usage: number;
  /** Seconds the agent process has run. */
  uptime: number;
  version: string;
  hostname: string;
  os: string;
  /** ISO 8601 UTC of the first registration. */
  registered_at: string;
  /** Lua modules the agent has. */
  modules: string[];
  labels: Record<string, string>;
  /**
   * ISO 8601 UTC of when the master issued the agent its own credential (agent identities);
   * null when it has none (it registered before identities existed, or was revoked and removed).
   */
  enrolled_at?: string | null;
  /** ISO 8601 UTC of `runner agent revoke`; null while the credential is valid. */
  revoked_at?: string | null;
}

/** The agent metrics object (service.md section 2) plus what the issue adds. */
export interface AgentMetrics {
  cpu: { cores: number; usage_percent: number; load_avg: [number, number, number] };
  memory: { total_bytes: number; used_bytes: number; usage_percent: number };
  disk: { total_bytes: number; used_bytes: number; usage_percent: number };
  network: { rx_bytes_per_sec: number; tx_bytes_per_sec: number };
  processes: number;
  uptime: number;
  /** ISO 8601 UTC. */
  collected_at: string;
}

export interface AgentProcess {
  pid: number;
  name: string;
  command: string;
  cpu_percent: number;
  memory_bytes: number;
  user: string;
}

export interface AgentNetworkInterface {
  name: string;
  addresses: string[];
  rx_bytes: number;
  tx_bytes: number;
  rx_bytes_per_sec: number;
  tx_bytes_per_sec: number;
}

export interface AgentDisk {
  mount: string;
  fs_type: string;
  total_bytes: number;
  used_bytes: number;
  usage_percent: number;
}

export interface AgentLogEntry {
  /** ISO 8601 UTC. */
  timestamp: string;
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  message: string;
}

export interface AgentExecResult {
  stdout: string;
  stderr: string;
  exit_code: number | null;
  timed_out: boolean;
  duration: number;
}

/**
 * The master's view of its agents, provided by the master side of the agent transport. Methods
 * that talk to an agent reject with a NotFoundError for an unknown agent and a RunnerError
 * `agent_unreachable` (status 503) for one that is offline or lost mid-call.
 */
export interface AgentRegistry {
  list(): Agent[];
  get(name: string): Agent | undefined;
  /**
   * Forgets the agent and its credential (a revoked one too), so the join token can enrol the
   * name again; disconnects it when connected.
   */
  remove(name: string): Promise<void>;
  /**
   * Revokes the agent's credential: its session closes with no reconnect, and neither that
   * credential nor the join token can take the name until `remove`. Answers the agent as now.
   */
  revoke(name: string): Promise<Agent>;
  metrics(name: string): Promise<AgentMetrics>;
  processes(name: string): Promise<AgentProcess[]>;
  network(name: string): Promise<AgentNetworkInterface[]>;
  disks(name: string): Promise<AgentDisk[]>;
  exec(
    name: string,
    command: string | string[],
    options?: { timeoutMs?: number; cwd?: string },
  ): Promise<AgentExecResult>;
  /** Asks the agent process to restart itself (it re-registers). */
  restart(name: string): Promise<void>;
  /** Asks the agent process to stop. */
  stop(name: string): Promise<void>;
  /** Follows the agent's log until `signal` aborts. */
  streamLogs(name: string, onEntry: (entry: AgentLogEntry) => void, signal: AbortSignal): Promise<void>;
  /** Called on every status or metrics change (and on removal, with status offline). */
  onChange(listener: (agent: Agent) => void): () => void;
}

export const AgentRegistryRef = createServiceRef<AgentRegistry>({
  id: 'agents.registry',
  description: 'the agents connected to this master (master agent transport)',
});

/** A shell on a PTY on an agent's host (AgentTerminals.open). */
export interface AgentTerminal {
  write(data: Uint8Array): void;
  resize(rows: number, cols: number): void;
  /** Closes the shell (SIGHUP); `exited` then settles. */
  close(): void;
  /** The shell's exit code; rejects when the agent went away or could not open one. */
  readonly exited: Promise<number>;
}

/**
 * Terminals and file copies on agents' hosts, for the terminal page: provided by the master side
 * of the agent transport, over each agent's own connection (OpenTerminal, PutFile and GetFile in
 * runner.proto). What runs, runs as the agent's user.
 */
export interface AgentTerminals {
  /** Opens the agent user's login shell on a PTY; `output` hears what it prints. */
  open(
    name: string,
    size: { rows: number; cols: number; term?: string },
    output: (data: Buffer) => void,
  ): Promise<AgentTerminal>;
  /** Writes a file on the agent's host (0600 unless `mode`); answers the bytes written. */
  putFile(name: string, path: string, data: Buffer, mode?: number): Promise<number>;
  /** Reads a file on the agent's host, refused (413) past `maxBytes`. */
  getFile(name: string, path: string, maxBytes: number): Promise<Buffer>;
}

export const AgentTerminalsRef = createServiceRef<AgentTerminals>({
  id: 'agents.terminals',
  description: "shells on a PTY and file copies on agents' hosts (the terminal page)",
});
