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

const normalise = (key: string) => key.toLowerCase().replace(/[-_.]/g, '');
const SECRET_SET = new Set(SECRET_FIELD_NAMES);
// Suffixes that make a compound name secret too (`github_token`, `db_password`, `aws_secret`);
// `key` alone is not one: `monkey`, `primary_key` and `cache_key` are ordinary.
const SECRET_SUFFIXES = ['password', 'passwd', 'secret', 'token', 'apikey', 'privatekey', 'passphrase'];

/**
 * True when values under this field name are masked whatever they hold: one of
 * SECRET_FIELD_NAMES or a name ending in one of them (`github_token`, `dbPassword`), compared
 * case-insensitively with `_`, `-` and `.` ignored.
 */
export function isSecretField(key: string): boolean {
  let secret = verdicts.get(key);
  if (secret === undefined) {
    const name = normalise(key);
    secret = SECRET_SET.has(name) || SECRET_SUFFIXES.some((suffix) => name.endsWith(suffix));
    // Field names repeat (every log line has `level`, `message`): remember a bounded number.
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(key, secret);
  }
  return secret;
}

const MAX_VERDICTS = 4096;
const verdicts = new Map<string, boolean>();
