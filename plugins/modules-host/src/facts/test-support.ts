import type { LogFields, Logger, LuaCallContext } from '@runner/plugin-sdk';

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields?: LogFields;
}

/** A real call context as the Lua runtime passes it, with a logger that records. */
export function callContext(options: { dryRun?: boolean; signal?: AbortSignal } = {}): {
  call: LuaCallContext;
  lines: LoggedLine[];
} {
  const lines: LoggedLine[] = [];
  const logger: Logger = {
    debug: (message, fields) => void lines.push({ level: 'debug', message, fields }),
    info: (message, fields) => void lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => void lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => void lines.push({ level: 'error', message, fields }),
    child: () => logger,
  };
  return {
    call: { dryRun: options.dryRun ?? false, logger, signal: options.signal ?? new AbortController().signal },
    lines,
  };
}
