import type { LogFields, Logger } from '@runner/plugin-sdk';

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: LogFields;
}

/** A Logger that keeps its lines, for asserting on warnings. */
export function recordingLogger(lines: LoggedLine[] = []): Logger & { lines: LoggedLine[] } {
  const at =
    (level: LoggedLine['level']) =>
    (message: string, fields: LogFields = {}): void => {
      lines.push({ level, message, fields });
    };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => recordingLogger(lines),
  };
}
