/** Structured fields attached to a log line (workflow, agent, duration in seconds, status, ...). */
export type LogFields = Record<string, unknown>;

/**
 * The logger plugins receive. Lines are JSON in the data directory's log file and readable on a
 * terminal. Values under keys that look secret (password, token, secret, key...) are redacted.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose every line carries `fields`. */
  child(fields: LogFields): Logger;
}

/**
 * Field names whose values never reach a log line, a run record or an API answer, at any depth
 * (compared case-insensitively, `_`/`-` ignored).
 */
export const SECRET_FIELD_NAMES: readonly string[] = Object.freeze([
  'password',
  'passwd',
  'secret',
  'token',
  'jointoken',
  'apikey',
  'authorization',
  'privatekey',
  'clientsecret',
  'passphrase',
]);

const normalise = (key: string) => key.toLowerCase().replace(/[-_]/g, '');
const SECRET_SET = new Set(SECRET_FIELD_NAMES);

export function isSecretField(key: string): boolean {
  return SECRET_SET.has(normalise(key));
}

/** A copy of `fields` with secret-named values replaced by `[redacted]`, at any depth. */
export function redactFields<T>(value: T, depth = 0): T {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactFields(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value))
    out[key] = isSecretField(key) ? '[redacted]' : redactFields(v, depth + 1);
  return out as T;
}
