import { readFileSync } from 'node:fs';
import { InvalidInputError, type RunnerConfig } from '@runner/plugin-sdk';
import { DEFAULT_RECONNECT, type ReconnectPolicy } from './reconnect.js';

export const DEFAULT_MASTER_PORT = 50053;
export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** The agent side's settings (README: configuration). */
export interface AgentConfig {
  name: string;
  /** `host:port`. */
  master: string;
  token?: string;
  tls?: { rootCert?: Buffer; certFile?: string; serverName?: string };
  labels: Record<string, string>;
  connectTimeoutMs: number;
  reconnect: ReconnectPolicy;
  execTimeoutMs: number;
  execOutputBytes: number;
  taskLogBytes: number;
  metricsCacheMs: number;
  logLines: number;
  maxMessageBytes: number;
}

export function readAgentConfig(config: RunnerConfig): AgentConfig {
  const name = config.get('agent.name', '').trim();
  if (!name)
    throw new InvalidInputError('no agent name: give it as `runner agent start <name>` (or config agent.name)', {
      field: 'agent.name',
    });
  checkAgentName(name);
  const master = parseMasterAddress(config.get('master.address', ''), config.sourceOf('master.address'));
  const certFile = config.get('agent.master_tls_cert', '').trim() || undefined;
  const useTls = certFile !== undefined || config.get('agent.master_tls', false);
  const serverName = config.get('agent.master_tls_server_name', '').trim() || undefined;
  let rootCert: Buffer | undefined;
  if (certFile) {
    try {
      rootCert = readFileSync(certFile);
    } catch (error) {
      throw new InvalidInputError(
        `--master-tls-cert ${certFile}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
        { field: 'agent.master_tls_cert' },
      );
    }
    if (!rootCert.toString('utf8').includes('-----BEGIN CERTIFICATE-----')) {
      throw new InvalidInputError(`--master-tls-cert ${certFile}: not a PEM certificate`, {
        field: 'agent.master_tls_cert',
      });
    }
  }
  const reconnect: ReconnectPolicy = {
    initialDelayMs: seconds(config, 'agent.reconnect_initial_delay', DEFAULT_RECONNECT.initialDelayMs / 1000) * 1000,
    maxDelayMs: seconds(config, 'agent.reconnect_max_delay', DEFAULT_RECONNECT.maxDelayMs / 1000) * 1000,
    multiplier: atLeast(config, 'agent.reconnect_multiplier', DEFAULT_RECONNECT.multiplier, 1),
    jitter: fraction(config, 'agent.reconnect_jitter', DEFAULT_RECONNECT.jitter),
    maxRetries: count(config, 'agent.reconnect_max_retries', DEFAULT_RECONNECT.maxRetries),
    breakerFailures: count(config, 'agent.circuit_breaker_failures', DEFAULT_RECONNECT.breakerFailures),
    breakerResetMs:
      seconds(config, 'agent.circuit_breaker_reset_timeout', DEFAULT_RECONNECT.breakerResetMs / 1000) * 1000,
  };
  const token = config.get('agent.join_token', '').trim() || undefined;
  return {
    name,
    master,
    token,
    tls: useTls ? { rootCert, certFile, serverName } : undefined,
    labels: readLabels(config),
    connectTimeoutMs: seconds(config, 'agent.connect_timeout', 10) * 1000,
    reconnect,
    execTimeoutMs: seconds(config, 'agent.exec_timeout', 300) * 1000,
    execOutputBytes: Math.round(atLeast(config, 'agent.exec_output_bytes', 1024 * 1024, 1)),
    taskLogBytes: Math.round(atLeast(config, 'agent.task_log_bytes', 1024 * 1024, 1)),
    metricsCacheMs: seconds(config, 'agent.metrics_cache', 5) * 1000,
    logLines: Math.round(atLeast(config, 'agent.log_lines', 500, 1)),
    maxMessageBytes: Math.round(atLeast(config, 'grpc.max_message_bytes', 16 * 1024 * 1024, 1024)),
  };
}

export function checkAgentName(name: string): void {
  if (!AGENT_NAME.test(name)) {
    throw new InvalidInputError(
      `agent name ${JSON.stringify(name)} is not valid: use letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit)`,
      { field: 'agent.name' },
    );
  }
}

/** `host:port`, `[v6]:port`, or a host alone (port 50053). */
export function parseMasterAddress(raw: string, source: string): string {
  const value = raw
    .trim()
    .replace(/^(grpc|https?):\/\//, '')
    .replace(/\/+$/, '');
  if (!value) {
    throw new InvalidInputError('no master address: pass --master <host:port> or set RUNNER_MASTER_ADDR', {
      field: 'master.address',
    });
  }
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  const plain = /^([^:[\]\s]+)(?::(\d+))?$/.exec(value);
  const match = bracketed ?? plain;
  const port = match?.[2] === undefined ? DEFAULT_MASTER_PORT : Number(match[2]);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidInputError(`master address ${JSON.stringify(raw)} (from ${source}) is not host:port`, {
      field: 'master.address',
    });
  }
  return bracketed ? `[${match[1]}]:${port}` : `${match[1]}:${port}`;
}

/** `agent.labels` as a mapping in config.yaml, or `k=v,k2=v2` from RUNNER_AGENT_LABELS or --labels. */
export function readLabels(config: RunnerConfig): Record<string, string> {
  const raw = (config.values.agent as Record<string, unknown> | undefined)?.labels;
  if (raw === undefined || raw === null || raw === '') return {};
  if (typeof raw === 'string') return parseLabels(raw);
  if (typeof raw === 'object' && !Array.isArray(raw)) {
    return Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  }
  throw new InvalidInputError(
    `config agent.labels (from ${config.sourceOf('agent.labels')}): expected a mapping or k=v,k2=v2`,
    { field: 'agent.labels' },
  );
}

export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new InvalidInputError(`label "${pair}": expected key=value`, { field: 'agent.labels' });
    labels[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return labels;
}

function seconds(config: RunnerConfig, key: string, fallback: number): number {
  const value = config.get(key, fallback);
  if (!(value > 0)) {
    throw new InvalidInputError(
      `config ${key} (from ${config.sourceOf(key)}): expected a positive number of seconds, got ${value}`,
      { field: key },
    );
  }
  return value;
}

function atLeast(config: RunnerConfig, key: string, fallback: number, min: number): number {
  const value = config.get(key, fallback);
  if (!(value >= min)) {
    throw new InvalidInputError(
      `config ${key} (from ${config.sourceOf(key)}): expected a number of at least ${min}, got ${value}`,
      { field: key },
    );
  }
  return value;
}

function count(config: RunnerConfig, key: string, fallback: number): number {
  const value = config.get(key, fallback);
  if (!Number.isInteger(value) || value < 0) {
    throw new InvalidInputError(
      `config ${key} (from ${config.sourceOf(key)}): expected a whole number of at least 0, got ${value}`,
      { field: key },
    );
  }
  return value;
}

function fraction(config: RunnerConfig, key: string, fallback: number): number {
  const value = config.get(key, fallback);
  if (!(value >= 0 && value <= 1)) {
    throw new InvalidInputError(
      `config ${key} (from ${config.sourceOf(key)}): expected a fraction from 0 to 1, got ${value}`,
      { field: key },
    );
  }
  return value;
}
