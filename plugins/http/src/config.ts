import { InvalidInputError, type RunnerConfig } from '@runner/plugin-sdk';

/** The plugin's settings, read once at setup so a bad value fails the boot, not a request. */
export interface HttpConfig {
  port: number;
  bindAddress: string;
  bodyLimitBytes: number;
  /** `['*']` allows every origin. */
  corsOrigins: string[];
  shutdownTimeoutMs: number;
  wsPingIntervalMs: number;
  wsMaxBufferedBytes: number;
}

export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export function readHttpConfig(config: RunnerConfig): HttpConfig {
  const port = config.get('http.port', 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidInputError(
      `config http.port (from ${config.sourceOf('http.port')}): expected a port number 0-65535, got ${port}`,
      {
        field: 'http.port',
      },
    );
  }
  const bindAddress = config.get('http.bind_address', '0.0.0.0').trim();
  if (bindAddress === '') {
    throw new InvalidInputError(
      `config http.bind_address (from ${config.sourceOf('http.bind_address')}): must not be empty`,
      {
        field: 'http.bind_address',
      },
    );
  }
  const corsOrigins = config.get('http.cors_origins', ['*']).map(String);
  return {
    port,
    bindAddress,
    bodyLimitBytes: positive(config, 'http.body_limit', DEFAULT_BODY_LIMIT_BYTES, 'bytes'),
    corsOrigins,
    shutdownTimeoutMs: positive(config, 'http.shutdown_timeout', 8, 'seconds') * 1000,
    wsPingIntervalMs: positive(config, 'http.ws_ping_interval', 30, 'seconds') * 1000,
    wsMaxBufferedBytes: positive(config, 'http.ws_max_buffered_bytes', DEFAULT_BODY_LIMIT_BYTES, 'bytes'),
  };
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
