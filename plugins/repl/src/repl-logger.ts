import { createRedactor, type LogFields, type Logger, type Redactor } from '@runner/plugin-sdk';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const COLOUR: Record<LogLevel, string> = { debug: '\x1b[90m', info: '\x1b[36m', warn: '\x1b[33m', error: '\x1b[31m' };

/**
 * The logger a REPL session's `log.*` calls and module functions write to: readable lines for the
 * person at the prompt, `INFO  deployed  version=1.2`, at `level` and above. Secret-named fields
 * and registered secret values are masked by the redactor, as the kernel's logger does.
 */
export function replLogger(
  write: (line: string) => void,
  options: { level: LogLevel; colour: boolean; redactor?: Redactor },
  bound: LogFields = {},
): Logger {
  const redactor = options.redactor ?? createRedactor();
  const line = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[level] < RANK[options.level]) return;
    const all = redactor.redact({ ...bound, ...fields });
    const extra = Object.entries(all)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    const label = level.toUpperCase().padEnd(5);
    const head = options.colour ? `${COLOUR[level]}${label}\x1b[0m` : label;
    write(redactor.redactText(`${head} ${message}${extra ? `  ${extra}` : ''}\n`));
  };
  return {
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    child: (fields) => replLogger(write, { ...options, redactor }, { ...bound, ...fields }),
  };
}
