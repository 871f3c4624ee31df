import { createRedactor, type LogFields, type Logger, type Redactor } from '@runner/plugin-sdk';
import type { LogEntry } from '@runner/proto';

type Level = 'debug' | 'info' | 'warn' | 'error';

const PROTO_LEVEL = {
  debug: 'LOG_LEVEL_DEBUG',
  info: 'LOG_LEVEL_INFO',
  warn: 'LOG_LEVEL_WARN',
  error: 'LOG_LEVEL_ERROR',
} as const;

/**
 * The agent's own log as StreamLogs serves it: the lines this plugin writes (connection, tasks,
 * commands, control) kept in a ring of recent lines and handed to followers as they come. Every
 * line also goes to the process log (file and terminal) unchanged.
 */
export class AgentLog {
  private readonly ring: LogEntry[] = [];
  private readonly followers = new Set<(entry: LogEntry) => void>();

  constructor(
    private readonly capacity: number,
    /** Every line is redacted before it is kept or streamed to the master. */
    private readonly redactor: Redactor = createRedactor(),
  ) {}

  /** A logger writing to `base` and to this log. */
  wrap(base: Logger, bound: LogFields = {}): Logger {
    const at =
      (level: Level) =>
      (message: string, fields?: LogFields): void => {
        base[level](message, fields);
        this.add(level, message, Object.keys(bound).length ? { ...bound, ...fields } : fields);
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (fields) => this.wrap(base.child(fields), { ...bound, ...fields }),
    };
  }

  add(level: Level, message: string, fields?: LogFields): void {
    const safe = fields && Object.keys(fields).length ? this.redactor.redact(fields) : undefined;
    const entry: LogEntry = {
      timestamp: new Date().toISOString(),
      level: PROTO_LEVEL[level],
      message: this.redactor.redactText(message),
      fields_json: safe ? this.redactor.redactText(JSON.stringify(safe)) : '',
    };
    this.ring.push(entry);
    if (this.ring.length > this.capacity) this.ring.splice(0, this.ring.length - this.capacity);
    for (const follower of this.followers) follower(entry);
  }

  recent(count: number): LogEntry[] {
    return count > 0 ? this.ring.slice(-count) : [];
  }

  follow(listener: (entry: LogEntry) => void): () => void {
    this.followers.add(listener);
    return () => void this.followers.delete(listener);
  }
}
