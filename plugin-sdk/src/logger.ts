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
