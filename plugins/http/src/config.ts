import { resolve } from 'node:path';
import {
  configuredTlsPair,
  readPemFile,
  positiveNumber as positive,
  type ConfigDeclaration,
  type RunnerConfig,
} from '@runner/plugin-sdk';

/** The plugin's settings, read once at setup so a bad value fails the boot, not a request. */
export interface HttpConfig {
  port: number;
  bindAddress: string;
  bodyLimitBytes: number;
  /** Origins besides the master's own; `['*']` allows every origin. */
  corsOrigins: string[];
  /** Host names accepted in the Host header besides IP addresses and localhost. */
  allowedHosts: string[];
  /** A non-loopback bind with authentication off is allowed (and warned about). */
  insecure: boolean;
  shutdownTimeoutMs: number;
  wsPingIntervalMs: number;
  wsMaxBufferedBytes: number;
  wsMaxBatchAgeMs: number;
  /** HTTPS when set: the PEM texts, and the certificate's absolute path (master.json names it). */
  tls?: { cert: Buffer; key: Buffer; certFile: string };
}

export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** Keys of the HTTP server, checked by the kernel before setup. */
export const HTTP_CONFIG: ConfigDeclaration = {
  'http.port': {
    schema: { type: 'integer', minimum: 0, maximum: 65535 },
    default: 8080,
    help: 'port of the REST API and WebSocket (0: any free port)',
  },
  'http.bind_address': {
    schema: { type: 'string', minLength: 1 },
    default: '127.0.0.1',
    help: 'address the HTTP server binds (and gRPC unless grpc.bind_address is set); 0.0.0.0 for every interface',
  },
  'http.allowed_hosts': {
    schema: { type: 'array', items: { type: 'string' } },
    default: [],
    help: 'host names the master answers to besides IP addresses and localhost (Host header check against DNS rebinding)',
  },
  'http.insecure': {
    schema: { type: 'boolean' },
    default: false,
    help: 'allow a non-loopback bind address with authentication off (runner server --insecure)',
  },
  'http.cors_origins': {
    schema: { type: 'array', items: { type: 'string' } },
    default: [],
    help: 'origins besides the master itself allowed by CORS and WebSocket (* for any; default: same origin only)',
  },
  'http.tls_cert': {
    schema: { type: 'string' },
    help: 'PEM certificate (chain) for HTTPS on the REST API, WebSocket and UI (--tls-cert, which gRPC uses too unless grpc.tls_cert is set)',
  },
  'http.tls_key': {
    schema: { type: 'string' },
    help: 'PEM private key file of http.tls_cert (--tls-key)',
    secret: true,
  },
  'http.body_limit': positive(DEFAULT_BODY_LIMIT_BYTES, 'largest request body (bytes)'),
  'http.shutdown_timeout': positive(8, 'seconds open requests get to finish when the master stops'),
  'http.ws_ping_interval': positive(30, 'seconds between WebSocket pings'),
  'http.ws_max_buffered_bytes': positive(
    DEFAULT_BODY_LIMIT_BYTES,
    'bytes a slow WebSocket client may have buffered before it is dropped',
  ),
  'http.ws_max_batch_age': positive(
    1,
    'milliseconds a WebSocket message may wait to share one write with later ones while more keep coming (lower: less latency, more writes)',
  ),
};

export function readHttpConfig(config: RunnerConfig): HttpConfig {
  return {
    port: config.get<number>('http.port'),
    bindAddress: config.get<string>('http.bind_address').trim(),
    bodyLimitBytes: config.get<number>('http.body_limit'),
    corsOrigins: config.get<string[]>('http.cors_origins'),
    allowedHosts: config.get<string[]>('http.allowed_hosts'),
    insecure: config.get<boolean>('http.insecure'),
    shutdownTimeoutMs: config.get<number>('http.shutdown_timeout') * 1000,
    wsPingIntervalMs: config.get<number>('http.ws_ping_interval') * 1000,
    wsMaxBufferedBytes: config.get<number>('http.ws_max_buffered_bytes'),
    wsMaxBatchAgeMs: config.get<number>('http.ws_max_batch_age'),
    tls: readTls(config),
  };
}

/** Both files or neither; each read now, so that a wrong path fails the boot naming its key. */
function readTls(config: RunnerConfig): HttpConfig['tls'] {
  const pair = configuredTlsPair(config, 'http', 'HTTPS');
  if (pair === undefined) return undefined;
  return {
    cert: readPemFile(config, 'http.tls_cert', pair.cert, 'certificate'),
    key: readPemFile(config, 'http.tls_key', pair.key, 'private key'),
    certFile: resolve(pair.cert),
  };
}
