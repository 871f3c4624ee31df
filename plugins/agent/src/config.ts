import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULT_SCRIPT_ENV,
  AGENT_NAME_PATTERN,
  AGENT_NAME_RULE,
  InvalidInputError,
  parseKeyValuePairs,
  positiveNumber as positive,
  type ConfigDeclaration,
  type RunnerConfig,
} from '@runner/plugin-sdk';
import { DEFAULT_RECONNECT, type ReconnectPolicy } from './reconnect.js';

export const DEFAULT_MASTER_PORT = 50053;

/** The agent side's settings (README: configuration). */
export interface AgentConfig {
  name: string;
  /** `host:port`. */
  /** The masters, as given (`a:50053, b:50053`): for messages. */
  master: string;
  /** Each master address, tried in turn: the agent goes to the next when its master dies. */
  masters: string[];
  token?: string;
  /** `<data-dir>/agent.credential`: the agent's own credential, issued at its enrolment. */
  credentialFile: string;
  tls?: { rootCert?: Buffer; certFile?: string; serverName?: string };
  labels: Record<string, string>;
  connectTimeoutMs: number;
  reconnect: ReconnectPolicy;
  execTimeoutMs: number;
  execOutputBytes: number;
  taskLogBytes: number;
  metricsCacheMs: number;
  stateTimeoutMs: number;
  logLines: number;
  maxMessageBytes: number;
  /** Names of this host's environment variables delegated tasks see (agent.script_env). */
  scriptEnvNames: readonly string[];
  /** Set when `--insecure` lets the credential cross the network in clear: the warning to log at start. */
  cleartextWarning?: string;
}

const count = (fallback: number, help: string) => ({
  schema: { type: 'integer', minimum: 0 } as const,
  default: fallback,
  help,
});

/**
 * Keys of the agent side, checked by the kernel before setup (durations in seconds). The master
 * address, `agent.join_token` and `grpc.max_message_bytes` are core keys (CORE_CONFIG in the SDK).
 */
export const AGENT_CONFIG: ConfigDeclaration = {
  'agent.name': { schema: { type: 'string' }, help: 'name of this agent (`runner agent start <name>`)' },
  'agent.labels': {
    schema: { type: 'object', additionalProperties: { type: 'string' } },
    default: {},
    help: 'labels for delegation (a mapping; k=v,k2=v2 in RUNNER_AGENT_LABELS)',
  },
  'agent.master_tls': { schema: { type: 'boolean' }, default: false, help: 'connect to the master over TLS' },
  'agent.master_tls_cert': {
    schema: { type: 'string' },
    help: "CA certificate (PEM) to trust for the master's TLS; implies agent.master_tls",
  },
  'agent.master_tls_server_name': {
    schema: { type: 'string' },
    help: "name to check in the master's certificate instead of the host dialled",
  },
  'agent.connect_timeout': positive(10, 'seconds a connection attempt to the master may take'),
  'agent.reconnect_initial_delay': positive(
    DEFAULT_RECONNECT.initialDelayMs / 1000,
    'seconds before the first reconnection attempt',
  ),
  'agent.reconnect_max_delay': positive(DEFAULT_RECONNECT.maxDelayMs / 1000, 'longest wait between attempts (seconds)'),
  'agent.reconnect_multiplier': {
    schema: { type: 'number', minimum: 1 },
    default: DEFAULT_RECONNECT.multiplier,
    help: 'factor the wait grows by after each failed attempt',
  },
  'agent.reconnect_jitter': {
    schema: { type: 'number', minimum: 0, maximum: 1 },
    default: DEFAULT_RECONNECT.jitter,
    help: 'fraction of random spread on each wait',
  },
  'agent.reconnect_max_retries': count(DEFAULT_RECONNECT.maxRetries, 'attempts before giving up (0: never give up)'),
  'agent.circuit_breaker_failures': count(
    DEFAULT_RECONNECT.breakerFailures,
    'failures in a row that open the circuit breaker',
  ),
  'agent.circuit_breaker_reset_timeout': positive(
    DEFAULT_RECONNECT.breakerResetMs / 1000,
    'seconds the open circuit waits before trying again',
  ),
  'agent.exec_timeout': positive(300, 'seconds a delegated task may run without its own timeout'),
  'agent.exec_output_bytes': {
    schema: { type: 'integer', minimum: 1 },
    default: 1024 * 1024,
    help: "bytes of a delegated command's output kept",
  },
  'agent.task_log_bytes': {
    schema: { type: 'integer', minimum: 1 },
    default: 1024 * 1024,
    help: "bytes of a delegated task's log sent to the master",
  },
  'agent.metrics_cache': positive(5, 'seconds metrics are answered from cache'),
  'agent.state_timeout': positive(30, "seconds a task's state.* call waits for the master's answer"),
  'agent.log_lines': {
    schema: { type: 'integer', minimum: 1 },
    default: 500,
    help: 'recent log lines kept for the master to stream',
  },
  'agent.script_env': {
    schema: { type: 'array', items: { type: 'string', minLength: 1 } },
    default: [...DEFAULT_SCRIPT_ENV],
    help: "this host's environment variables delegated tasks see (env, os.getenv, os.execute); the master's never travel",
  },
  'agent.insecure': {
    schema: { type: 'boolean' },
    default: false,
    help: 'send the join token and credential to a master that is not on loopback without TLS (runner agent start --insecure; warned about)',
  },
  'agent.restart_mode': {
    schema: { type: 'string', enum: ['auto', 'exec', 'exit'] },
    default: 'auto',
    help: 'how the agent restarts when asked: exec itself, exit 75 for a service manager, or auto',
  },
};

export function readAgentConfig(config: RunnerConfig): AgentConfig {
  const name = (config.get<string | undefined>('agent.name') ?? '').trim();
  if (!name)
    throw new InvalidInputError('no agent name: give it as `runner agent start <name>` (or config agent.name)', {
      field: 'agent.name',
    });
  checkAgentName(name);
  const masters = parseMasterAddresses(config.get('master.address', ''), config.sourceOf('master.address'));
  const master = masters.join(', ');
  const certFile = config.get('agent.master_tls_cert', '').trim() || undefined;
  const useTls = certFile !== undefined || config.get<boolean>('agent.master_tls');
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
  const cleartextWarning = useTls
    ? undefined
    : masters.map((one) => refuseCleartext(one, config.get<boolean>('agent.insecure'))).find((w) => w !== undefined);
  const num = (key: string) => config.get<number>(key);
  const reconnect: ReconnectPolicy = {
    initialDelayMs: num('agent.reconnect_initial_delay') * 1000,
    maxDelayMs: num('agent.reconnect_max_delay') * 1000,
    multiplier: num('agent.reconnect_multiplier'),
    jitter: num('agent.reconnect_jitter'),
    maxRetries: num('agent.reconnect_max_retries'),
    breakerFailures: num('agent.circuit_breaker_failures'),
    breakerResetMs: num('agent.circuit_breaker_reset_timeout') * 1000,
  };
  const token = config.get('agent.join_token', '').trim() || undefined;
  return {
    name,
    master,
    masters,
    token,
    credentialFile: join(config.dataDir, 'agent.credential'),
    tls: useTls ? { rootCert, certFile, serverName } : undefined,
    labels: config.get<Record<string, string>>('agent.labels'),
    connectTimeoutMs: num('agent.connect_timeout') * 1000,
    reconnect,
    execTimeoutMs: num('agent.exec_timeout') * 1000,
    execOutputBytes: num('agent.exec_output_bytes'),
    taskLogBytes: num('agent.task_log_bytes'),
    metricsCacheMs: num('agent.metrics_cache') * 1000,
    stateTimeoutMs: num('agent.state_timeout') * 1000,
    logLines: num('agent.log_lines'),
    maxMessageBytes: num('grpc.max_message_bytes'),
    scriptEnvNames: config.get<string[]>('agent.script_env'),
    ...(cleartextWarning ? { cleartextWarning } : {}),
  };
}

/**
 * Without TLS the join token and the agent's credential cross the network in clear: anyone on the
 * path could take the agent's name and receive its tasks. Refused unless the master is on this
 * host, or `--insecure` says the network is trusted: then answers the warning to log at every start.
 */
function refuseCleartext(master: string, insecure: boolean): string | undefined {
  if (isLoopbackHost(hostOf(master))) return undefined;
  if (insecure) {
    return `INSECURE: connecting to master ${master} without TLS: the join token and this agent's credential cross the network in clear`;
  }
  throw new InvalidInputError(
    `refusing to send this agent's credential to ${master} without TLS: give --master-tls-cert <ca.pem> (the master's certificate or its CA; README "Pinning the master's certificate"), or --insecure on a trusted network`,
    { field: 'agent.master_tls_cert' },
  );
}

/** The host of `host:port` or `[v6]:port`. */
export function hostOf(address: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(address);
  return bracketed ? bracketed[1] : address.slice(0, address.lastIndexOf(':'));
}

/** 127.0.0.0/8, ::1 and localhost: the agent's credential does not leave this host. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

export function checkAgentName(name: string): void {
  if (!AGENT_NAME_PATTERN.test(name)) {
    throw new InvalidInputError(`agent name ${JSON.stringify(name)} is not valid: use ${AGENT_NAME_RULE}`, {
      field: 'agent.name',
    });
  }
}

/**
 * `a:50053,b:50053`: several masters sharing one store (DNS names welcome), each as
 * `parseMasterAddress` reads it; the same address twice counts once.
 */
export function parseMasterAddresses(raw: string, source: string): string[] {
  const parts = raw.split(',').filter((part) => part.trim() !== '');
  if (parts.length === 0) return [parseMasterAddress('', source)];
  return [...new Set(parts.map((part) => parseMasterAddress(part, source)))];
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

/** `--labels zone=a,tier=web`. */
export function parseLabels(text: string): Record<string, string> {
  return parseKeyValuePairs(
    text,
    (pair) => new InvalidInputError(`label "${pair}": expected key=value`, { field: 'agent.labels' }),
  );
}
