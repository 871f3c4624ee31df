import type { LogFields, Logger, TaskLogLine } from '@runner/plugin-sdk';

export interface TaskLog {
  /** What the task's script and modules log to. */
  logger: Logger;
  lines: TaskLogLine[];
  truncated: boolean;
  /** Adds a line written by the engine itself (retries, skips); also capped. */
  add(level: TaskLogLine['level'], message: string, fields?: LogFields): void;
  /** Counts lines dropped before they got here (the local executor stops sending at the cap). */
  drop(count: number): void;
}

/**
 * A task's log: every line is kept in order up to `capBytes` (a chatty script must not grow a run
 * record without bound), then one note says how much was dropped. Each kept line (and the note) is also handed
 * to `onLine` for live views, and to `mirror` (the process log) with the run's context fields: the
 * cap bounds what a task writes to the master's own log too (a script printing 1 GiB wrote 1 GiB
 * to runner.log when every line was mirrored).
 */
export function createTaskLog(capBytes: number, onLine: (line: TaskLogLine) => void, mirror?: Logger): TaskLog {
  let bytes = 0;
  let dropped = 0;
  const log: TaskLog = {
    lines: [],
    truncated: false,
    logger: undefined as unknown as Logger,
    add(level, message, fields) {
      // Not redacted here: the run store redacts the record once when it writes it, the bus each
      // live line, the process logger its mirror (one walk per record rather than per line).
      const line: TaskLogLine = {
        timestamp: new Date().toISOString(),
        level,
        message,
        ...(fields && Object.keys(fields).length ? { fields } : {}),
      };
      const size = message.length + (fields ? JSON.stringify(fields).length : 0) + 48;
      if (bytes + size > capBytes) {
        log.drop(1);
        return;
      }
      bytes += size;
      mirror?.[level](message, fields);
      log.lines.push(line);
      onLine(line);
    },
    drop(count) {
      dropped += count;
      if (!log.truncated) {
        log.truncated = true;
        const note: TaskLogLine = {
          timestamp: new Date().toISOString(),
          level: 'warn',
          message: `log truncated at ${capBytes} bytes; later lines are not kept`,
        };
        log.lines.push(note);
        mirror?.warn(note.message);
        // Live views count the note as a line too (their count must match the stored log's).
        onLine(note);
      }
      log.lines[log.lines.length - 1].fields = { dropped_lines: dropped };
    },
  };
  const at =
    (level: TaskLogLine['level'], bound: LogFields) =>
    (message: string, fields?: LogFields): void =>
      log.add(level, message, Object.keys(bound).length ? { ...bound, ...fields } : fields);
  const make = (bound: LogFields): Logger => ({
    debug: at('debug', bound),
    info: at('info', bound),
    warn: at('warn', bound),
    error: at('error', bound),
    child: (fields) => make({ ...bound, ...fields }),
  });
  log.logger = make({});
  return log;
}

/**
 * `parent.child(fields)`, made when first used: a task's log mirrors into a child of the run's
 * logger, and most tasks log nothing, while a child of the process logger (pino) costs tens of
 * microseconds to make, a noticeable part of a trivial task.
 */
export function lazyChild(parent: Logger, fields: LogFields): Logger {
  let child: Logger | undefined;
  const get = (): Logger => (child ??= parent.child(fields));
  return {
    debug: (message, more) => get().debug(message, more),
    info: (message, more) => get().info(message, more),
    warn: (message, more) => get().warn(message, more),
    error: (message, more) => get().error(message, more),
    child: (more) => get().child(more),
  };
}

/**
 * What a run's tasks may write to the master's own log (engine.run_log_bytes), all tasks
 * together: past it their lines still reach the run record (each task up to its own cap) but not
 * runner.log or the terminal, and one line says so; `dropped` counts what was left out. The cap
 * per task alone let a run of many tasks, or many runs, flood the master's log.
 */
export function runLogBudget(run: Logger, capBytes: number): { mirror(fields: LogFields): Logger; dropped(): number } {
  let bytes = 0;
  let dropped = 0;
  const admit = (message: string, fields?: LogFields): boolean => {
    const size = message.length + (fields ? JSON.stringify(fields).length : 0) + 48;
    if (bytes + size <= capBytes) {
      bytes += size;
      return true;
    }
    if (dropped++ === 0)
      run.warn(
        `task log lines of this run past ${capBytes} bytes are not written to the master's log (engine.run_log_bytes); the run record keeps them`,
      );
    return false;
  };
  const make = (fields: LogFields): Logger => {
    const target = lazyChild(run, fields);
    const at =
      (level: keyof Omit<Logger, 'child'>) =>
      (message: string, more?: LogFields): void => {
        if (admit(message, more)) target[level](message, more);
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...fields, ...more }),
    };
  };
  return { mirror: make, dropped: () => dropped };
}
