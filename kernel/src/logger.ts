import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { createRedactor, type LogFields, type Logger, type Redactor } from '@runner/plugin-sdk';
import { LogFile } from './log-file.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface LoggerOptions {
  dataDir: string;
  level: LogLevel;
  /** Readable lines on this stream (stderr); none when undefined. */
  terminal?: NodeJS.WritableStream;
  /** Level for the terminal; defaults to `level`. */
  terminalLevel?: LogLevel;
  /** Rotate the file past this size (default 10 MiB), at start and while running; one previous file is kept. */
  rotateBytes?: number;
  /** The process's one redactor (default: a new one, masking secret-named fields only). */
  redactor?: Redactor;
}

export interface KernelLogger extends Logger {
  /** Changes how much reaches the terminal (the file keeps its level). */
  setTerminalLevel(level: LogLevel): void;
  /** Writes what is buffered to the file; call before exit. */
  flush(): Promise<void>;
  readonly file: string;
}

const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/**
 * pino, writing JSON lines (ISO 8601 `time`, `level` as a word, `msg`, context fields) to
 * `<dataDir>/logs/runner.log`, and readable lines to the terminal. Every line passes the
 * redactor at every level: fields with secret names are censored before pino sees them, and
 * each serialised line (message, fields, a child's bound fields) has registered secret values
 * masked before either stream sees it.
 */
export async function createLogger(options: LoggerOptions): Promise<KernelLogger> {
  const { default: pino } = await import('pino');
  const redactor = options.redactor ?? createRedactor();
  const file = join(options.dataDir, 'logs', 'runner.log');
  // The terminal stream filters by itself so its level can change after boot; pino hands it
  // every line the file could get, or any line at debug when the terminal wants debug.
  const terminal = options.terminal
    ? readableLines(options.terminal, options.terminalLevel ?? options.level)
    : undefined;
  // While the file cannot be written, its lines go to the terminal too (those the terminal's
  // level did not already show there), or, without a terminal, as JSON to stderr.
  const fallback = options.terminal
    ? readableLines(options.terminal, options.level, () => terminal?.level())
    : undefined;
  const fileStream = openLogFile(file, options.rotateBytes ?? 10 * 1024 * 1024, {
    fallback: (line) => (fallback ? fallback.stream.write(line) : process.stderr.write(line)),
    notice: (text) => (options.terminal ?? process.stderr).write(`${text}\n`),
  });
  const streams: { level: LogLevel; stream: { write(line: string): void } }[] =
    fileStream instanceof Error ? [] : [{ level: options.level, stream: fileStream }];
  if (terminal) streams.push({ level: 'debug', stream: terminal.stream });

  const base = pino(
    {
      level: terminal && LEVELS[terminal.level()] < LEVELS[options.level] ? terminal.level() : options.level,
      base: undefined,
      messageKey: 'message',
      timestamp: () => `,"timestamp":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      // One pass over the finished line: it holds the message, the fields and the bound fields of
      // children (serialised once, when the child was made, perhaps before a secret was known).
      hooks: { streamWrite: (line) => redactor.redactText(line) },
    },
    pino.multistream(streams.map((s) => ({ level: s.level, stream: s.stream }))),
  );

  // A line below the level is dropped before its fields are walked for secrets: the HTTP router
  // logs every request at debug, and redacting fields nobody writes cost every request.
  const at =
    (p: typeof base, level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      if (p.isLevelEnabled(level)) p[level](fields ? redactor.redact(fields) : {}, message);
    };
  const wrap = (p: typeof base): Logger => ({
    debug: at(p, 'debug'),
    info: at(p, 'info'),
    warn: at(p, 'warn'),
    error: at(p, 'error'),
    child: (fields: LogFields) => wrap(p.child(redactor.redact(fields))),
  });
  const logger = wrap(base);
  if (fileStream instanceof Error)
    logger.warn(`cannot write the log file ${file}: ${fileStream.message}; logging to the terminal only`);
  return {
    ...logger,
    file,
    setTerminalLevel: (level) => {
      terminal?.setLevel(level);
      if (LEVELS[level] < LEVELS[base.level as LogLevel]) base.level = level;
    },
    flush: async () => {
      if (fileStream instanceof Error) return;
      await fileStream.flush();
    },
  };
}

/**
 * Opens the log file, rotating it past `rotateBytes` (one previous file kept), now and while it
 * is written (LogFile). An unwritable data
 * directory must not stop `runner doctor` from saying so, hence an Error instead of a throw.
 */
function openLogFile(
  file: string,
  rotateBytes: number,
  handlers: Pick<import('./log-file.js').LogFileOptions, 'fallback' | 'notice'>,
): LogFile | Error {
  try {
    // The log may hold what a secret-named field did not redact: only this user reads it (issue 9).
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (existsSync(file) && statSync(file).size > rotateBytes) renameSync(file, `${file}.1`);
    // Asynchronous writes keep logging off the hot path; `flush` drains them before exit.
    return new LogFile({ path: file, mode: 0o600, rotateBytes, ...handlers });
  } catch (error) {
    return error as Error;
  }
}

/** `12:00:01 INFO  message  key=value` from each JSON line at or above a changeable level. */
function readableLines(
  out: NodeJS.WritableStream,
  initial: LogLevel,
  /** Lines at or above this level are left out (another stream shows them). */
  shownElsewhere: () => LogLevel | undefined = () => undefined,
): { stream: Writable; level(): LogLevel; setLevel(level: LogLevel): void } {
  let threshold = initial;
  const colour = 'isTTY' in out && (out as { isTTY?: boolean }).isTTY;
  const paint: Record<string, string> = { debug: '\x1b[90m', info: '\x1b[36m', warn: '\x1b[33m', error: '\x1b[31m' };
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          const { timestamp, level, message, ...fields } = JSON.parse(line) as Record<string, unknown>;
          const rank = LEVELS[level as LogLevel] ?? 0;
          const elsewhere = shownElsewhere();
          if (rank < LEVELS[threshold] || (elsewhere !== undefined && rank >= LEVELS[elsewhere])) continue;
          const time = String(timestamp).slice(11, 19);
          const label = String(level).toUpperCase().padEnd(5);
          const extra = Object.entries(fields)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join(' ');
          const head = colour ? `${paint[String(level)] ?? ''}${label}\x1b[0m` : label;
          out.write(`${time} ${head} ${String(message)}${extra ? `  ${extra}` : ''}\n`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
  return { stream, level: () => threshold, setLevel: (level) => void (threshold = level) };
}
