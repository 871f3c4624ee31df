import { readFileSync } from 'node:fs';
import {
  configuredTlsPair,
  InvalidInputError,
  positiveNumber,
  type ConfigDeclaration,
  type RunnerConfig,
} from '@runner/plugin-sdk';

/** The master side's settings, read once at setup so a bad value fails the boot, not an agent. */
export interface MasterTransportConfig {
  port: number;
  bindAddress: string;
  /** PEM files; both or neither. */
  tlsCert?: string;
  tlsKey?: string;
  /** Whose keys named them (`grpc` or `http`), for errors reading them. */
  tlsSection?: 'grpc' | 'http';
  /** grpc.insecure_secrets: a stack run's secrets may go to agents off loopback without TLS. */
  insecureSecrets?: boolean;
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

/**
 * Keys of the gRPC side, checked by the kernel before setup. `grpc.max_message_bytes` and
 * `agent.join_token`, which the agent plugins share, are core keys (CORE_CONFIG in the SDK).
 */
export const TRANSPORT_CONFIG: ConfigDeclaration = {
  'grpc.port': {
    schema: { type: 'integer', minimum: 0, maximum: 65535 },
    default: DEFAULT_GRPC_PORT,
    help: 'gRPC port agents connect to (0: any free port)',
  },
  'grpc.bind_address': {
    schema: { type: 'string', minLength: 1 },
    help: 'address the gRPC server binds (default: http.bind_address, which defaults to 127.0.0.1)',
  },
  'grpc.tls_cert': {
    schema: { type: 'string' },
    help: 'PEM certificate for the agents gRPC port, with grpc.tls_key (default: http.tls_cert, --tls-cert)',
  },
  'grpc.tls_key': {
    schema: { type: 'string' },
    help: 'PEM private key file of grpc.tls_cert',
    secret: true,
  },
  'grpc.insecure_secrets': {
    schema: { type: 'boolean' },
    default: false,
    help: "send a stack run's secrets to agents over gRPC without TLS when they connect from another host (refused by default; loopback is always allowed)",
  },
  'agent.heartbeat_interval': positiveNumber(30, 'how often agents send a heartbeat (seconds)'),
  'agent.heartbeat_timeout': positiveNumber(
    90,
    'silence after which an agent is offline; above heartbeat_interval (seconds)',
  ),
  'agent.warning_threshold': {
    schema: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
    default: 80,
    help: 'percent of CPU, memory or disk above which an agent is `warning`',
  },
  'agent.register_timeout': positiveNumber(10, 'how long a new stream may take to register (seconds)'),
  'agent.call_timeout': positiveNumber(30, 'deadline of a metrics, exec or control call to an agent (seconds)'),
  'agent.persist_interval': positiveNumber(30, 'how often heartbeat data is written to the store (seconds)'),
  'agent.log_tail': {
    schema: { type: 'integer', minimum: 1 },
    default: 100,
    help: 'recent agent log lines a log stream starts with',
  },
};

export function readMasterConfig(config: RunnerConfig): MasterTransportConfig {
  // --tls-cert/--tls-key set http.tls_* and serve both ports; grpc.tls_* give gRPC a pair of its own.
  const own = Boolean(
    config.get<string | undefined>('grpc.tls_cert') || config.get<string | undefined>('grpc.tls_key'),
  );
  const section = own ? 'grpc' : 'http';
  const tls = configuredTlsPair(config, section, 'TLS for agents');
  const interval = config.get<number>('agent.heartbeat_interval');
  const timeout = config.get<number>('agent.heartbeat_timeout');
  if (timeout <= interval) {
    throw new InvalidInputError(
      `config agent.heartbeat_timeout (${timeout} s, from ${config.sourceOf('agent.heartbeat_timeout')}) must be longer than agent.heartbeat_interval (${interval} s)`,
      { field: 'agent.heartbeat_timeout' },
    );
  }
  return {
    port: config.get<number>('grpc.port'),
    // `--bind-address` covers both servers; `--grpc-bind-address` sets gRPC's alone.
    bindAddress: (
      config.get<string | undefined>('grpc.bind_address') ?? config.get<string>('http.bind_address', '127.0.0.1')
    ).trim(),
    tlsCert: tls?.cert,
    tlsSection: section,
    tlsKey: tls?.key,
    insecureSecrets: config.get<boolean>('grpc.insecure_secrets', false),
    heartbeatIntervalMs: interval * 1000,
    heartbeatTimeoutMs: timeout * 1000,
    warningThreshold: config.get<number>('agent.warning_threshold'),
    registerTimeoutMs: config.get<number>('agent.register_timeout') * 1000,
    callTimeoutMs: config.get<number>('agent.call_timeout') * 1000,
    persistIntervalMs: config.get<number>('agent.persist_interval') * 1000,
    maxMessageBytes: config.get<number>('grpc.max_message_bytes'),
    logTail: config.get<number>('agent.log_tail'),
  };
}

/** A PEM file named by config `key`, read when the server starts. */
export function readPem(path: string, key: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new InvalidInputError(
      `config ${key}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      {
        field: key,
      },
    );
  }
}
