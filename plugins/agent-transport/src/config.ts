import { InvalidInputError, type RunnerConfig } from '@runner/plugin-sdk';

/** The master side's settings, read once at setup so a bad value fails the boot, not an agent. */
export interface MasterTransportConfig {
  port: number;
  bindAddress: string;
  /** PEM files; both or neither. */
  tlsCert?: string;
  tlsKey?: string;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  /** Percent of CPU, memory or disk above which an agent's status is `warning`. */
  warningThreshold: number;
  /** How long a new stream may take to send its `register`. */
  registerTimeoutMs: number;
  /** Deadline of a metrics, exec (beyond its own timeout) or control call. */
  callTimeoutMs: number;
  /** How often heartbeat data is written to the store (registrations and disconnections at once). */
  persistIntervalMs: number;
  maxMessageBytes: number;
  /** Recent agent log lines StreamLogs starts with. */
  logTail: number;
}

export const DEFAULT_GRPC_PORT = 50053;

export function readMasterConfig(config: RunnerConfig): MasterTransportConfig {
  const port = config.get('grpc.port', DEFAULT_GRPC_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidInputError(
      `config grpc.port (from ${config.sourceOf('grpc.port')}): expected a port number 0-65535, got ${port}`,
      { field: 'grpc.port' },
    );
  }
  const bindAddress = config.get('grpc.bind_address', '0.0.0.0').trim();
  if (!bindAddress) {
    throw new InvalidInputError(
      `config grpc.bind_address (from ${config.sourceOf('grpc.bind_address')}): must not be empty`,
      {
        field: 'grpc.bind_address',
      },
    );
  }
  const tlsCert = config.get('grpc.tls_cert', '') || undefined;
  const tlsKey = config.get('grpc.tls_key', '') || undefined;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    const missing = tlsCert === undefined ? 'grpc.tls_cert (--tls-cert)' : 'grpc.tls_key (--tls-key)';
    throw new InvalidInputError(`TLS for agents needs both a certificate and its key: ${missing} is not set`, {
      field: tlsCert === undefined ? 'grpc.tls_cert' : 'grpc.tls_key',
    });
  }
  const interval = seconds(config, 'agent.heartbeat_interval', 30);
  const timeout = seconds(config, 'agent.heartbeat_timeout', 90);
  if (timeout <= interval) {
    throw new InvalidInputError(
      `config agent.heartbeat_timeout (${timeout} s, from ${config.sourceOf('agent.heartbeat_timeout')}) must be longer than agent.heartbeat_interval (${interval} s)`,
      { field: 'agent.heartbeat_timeout' },
    );
  }
  const threshold = config.get('agent.warning_threshold', 80);
  if (!(threshold > 0 && threshold <= 100)) {
    throw new InvalidInputError(
      `config agent.warning_threshold (from ${config.sourceOf('agent.warning_threshold')}): expected a percentage above 0 and at most 100, got ${threshold}`,
      { field: 'agent.warning_threshold' },
    );
  }
  return {
    port,
    bindAddress,
    tlsCert,
    tlsKey,
    heartbeatIntervalMs: interval * 1000,
    heartbeatTimeoutMs: timeout * 1000,
    warningThreshold: threshold,
    registerTimeoutMs: seconds(config, 'agent.register_timeout', 10) * 1000,
    callTimeoutMs: seconds(config, 'agent.call_timeout', 30) * 1000,
    persistIntervalMs: seconds(config, 'agent.persist_interval', 30) * 1000,
    maxMessageBytes: Math.round(positive(config, 'grpc.max_message_bytes', 16 * 1024 * 1024, 'bytes')),
    logTail: Math.round(positive(config, 'agent.log_tail', 100, 'lines')),
  };
}

function seconds(config: RunnerConfig, key: string, fallback: number): number {
  return positive(config, key, fallback, 'seconds');
}

function positive(config: RunnerConfig, key: string, fallback: number, unit: string): number {
  const value = config.get(key, fallback);
  if (!(value > 0)) {
    throw new InvalidInputError(
      `config ${key} (from ${config.sourceOf(key)}): expected a positive number of ${unit}, got ${value}`,
      { field: key },
    );
  }
  return value;
}
