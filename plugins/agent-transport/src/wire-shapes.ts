// The master's view of an agent in the shapes the SDK and the REST API use: records to Agent and
// AgentFacts, the gRPC metrics, processes, network and disk messages, and log entries.
import type {
  Agent,
  AgentDisk,
  AgentFacts,
  AgentLogEntry,
  AgentMetrics,
  AgentNetworkInterface,
  AgentProcess,
  AgentStatus,
  TaskLogLine,
} from '@runner/plugin-sdk';
import type { LogEntry__Output, MetricsResponse__Output } from '@runner/proto';
import type { StoredAgent } from './agent-store.js';
import type { AgentSession } from './session.js';

/** An agent as the master tracks it: the stored facts plus what only lives in memory. */
export interface AgentRecord extends StoredAgent {
  status: AgentStatus;
  error: string;
  session?: AgentSession;
  /** Heartbeats in a row that found a warning agent well below the threshold (master.ts). */
  calmBeats?: number;
}

export function round(value: number): number {
  return Math.round(value * 10) / 10;
}

export function toAgent(record: AgentRecord): Agent {
  return {
    name: record.name,
    address: record.address,
    status: record.status,
    last_heartbeat: record.last_heartbeat,
    cpu_usage: record.cpu_usage,
    memory_usage: record.memory_usage,
    // As of now, not of the last heartbeat (up to an interval ago) while the agent is connected.
    uptime: Math.floor(
      record.uptime + (record.session ? Math.max(0, (Date.now() - Date.parse(record.last_heartbeat)) / 1000) : 0),
    ),
    version: record.version,
    hostname: record.hostname,
    os: record.os,
    registered_at: record.registered_at,
    modules: [...record.modules],
    labels: { ...record.labels },
  };
}

export function toFacts(record: AgentRecord): AgentFacts {
  return {
    ...toAgent(record),
    disk_usage: record.disk_usage,
    online: record.session !== undefined,
    running_tasks: record.session?.inFlight ?? 0,
  };
}

export function toMetrics(metrics: MetricsResponse__Output['metrics']): AgentMetrics {
  const load = metrics?.cpu?.load_avg ?? [];
  return {
    cpu: {
      cores: metrics?.cpu?.cores ?? 0,
      usage_percent: metrics?.cpu?.usage_percent ?? 0,
      load_avg: [load[0] ?? 0, load[1] ?? 0, load[2] ?? 0],
    },
    memory: {
      total_bytes: metrics?.memory?.total_bytes ?? 0,
      used_bytes: metrics?.memory?.used_bytes ?? 0,
      usage_percent: metrics?.memory?.usage_percent ?? 0,
    },
    disk: {
      total_bytes: metrics?.disk?.total_bytes ?? 0,
      used_bytes: metrics?.disk?.used_bytes ?? 0,
      usage_percent: metrics?.disk?.usage_percent ?? 0,
    },
    network: {
      rx_bytes_per_sec: metrics?.network?.rx_bytes_per_sec ?? 0,
      tx_bytes_per_sec: metrics?.network?.tx_bytes_per_sec ?? 0,
    },
    processes: metrics?.processes ?? 0,
    uptime: Math.floor(metrics?.uptime ?? 0),
    collected_at: metrics?.collected_at ?? new Date().toISOString(),
  };
}

export function toProcess(p: MetricsResponse__Output['processes'][number]): AgentProcess {
  return {
    pid: p.pid,
    name: p.name,
    command: p.command,
    cpu_percent: p.cpu_percent,
    memory_bytes: p.memory_bytes,
    user: p.user,
  };
}

export function toInterface(n: MetricsResponse__Output['network'][number]): AgentNetworkInterface {
  return {
    name: n.name,
    addresses: [...n.addresses],
    rx_bytes: n.rx_bytes,
    tx_bytes: n.tx_bytes,
    rx_bytes_per_sec: n.rx_bytes_per_sec,
    tx_bytes_per_sec: n.tx_bytes_per_sec,
  };
}

export function toDisk(d: MetricsResponse__Output['disks'][number]): AgentDisk {
  return {
    mount: d.mount,
    fs_type: d.fs_type,
    total_bytes: d.total_bytes,
    used_bytes: d.used_bytes,
    usage_percent: d.usage_percent,
  };
}

const LEVELS = {
  LOG_LEVEL_DEBUG: 'debug',
  LOG_LEVEL_INFO: 'info',
  LOG_LEVEL_WARN: 'warn',
  LOG_LEVEL_ERROR: 'error',
  LOG_LEVEL_UNSPECIFIED: 'info',
} as const;

function fieldsOf(entry: LogEntry__Output): Record<string, unknown> | undefined {
  if (!entry.fields_json) return undefined;
  try {
    return JSON.parse(entry.fields_json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export function toTaskLog(entry: LogEntry__Output): TaskLogLine {
  const fields = fieldsOf(entry);
  return {
    timestamp: entry.timestamp,
    level: LEVELS[entry.level],
    message: entry.message,
    ...(fields ? { fields } : {}),
  };
}

export function toAgentLog(entry: LogEntry__Output): AgentLogEntry {
  const fields = fieldsOf(entry);
  const extra = fields
    ? Object.entries(fields)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ')
    : '';
  return {
    timestamp: entry.timestamp,
    level: LEVELS[entry.level].toUpperCase() as AgentLogEntry['level'],
    message: extra ? `${entry.message}  ${extra}` : entry.message,
  };
}
