import { closeSync, fstatSync, openSync, renameSync, write, writeSync } from 'node:fs';

const openFiles = new Set<LogFile>();

function writeAllRemaining(): void {
  for (const file of openFiles) file.writeRemainingSync();
}

/** How long the log stays on stderr before the file is tried again. */
export const LOG_FILE_RETRY_MS = 5000;

export interface LogFileOptions {
  path: string;
  mode: number;
  /** Where lines go while the file cannot be written. */
  fallback(line: string): void;
  /** One line for a person on stderr, each time the destination changes. */
  notice(text: string): void;
  retryMs?: number;
  /**
   * Past this many bytes the file becomes `<path>.1` (the previous one goes) and writing goes on
   * in a new file, between two batches of at most this many bytes: a flood of lines (a script
   * printing 1 GiB wrote 1 GiB) keeps two files of about this size, each under twice it, however
   * busy the machine. Undefined: never.
   */
  rotateBytes?: number;
}

/**
 * The log file as pino's destination: lines are appended in batches off the event loop. Unlike
 * pino.destination (sonic-boom), a failed write (ENOSPC, EIO...) neither crashes the process with
 * an unhandled 'error' nor hangs its exit (sonic-boom's flushSync retries such a write forever):
 * the lines go to the fallback, one notice says so, and the file is tried again every `retryMs`.
 */
export class LogFile {
  private fd: number;
  /** Bytes in the file now (rotation). */
  private size: number;
  private pending: string[] = [];
  private writing = false;
  private failedWith: string | null = null;
  private waiters: (() => void)[] = [];
  private readonly retryMs: number;

  constructor(private readonly options: LogFileOptions) {
    this.fd = openSync(options.path, 'a', options.mode);
    this.size = fstatSync(this.fd).size;
    this.retryMs = options.retryMs ?? LOG_FILE_RETRY_MS;
    openFiles.add(this);
    if (openFiles.size === 1) process.once('exit', writeAllRemaining);
  }

  write(line: string): boolean {
    if (this.failedWith !== null) this.options.fallback(line);
    else {
      this.pending.push(line);
      if (!this.writing) this.writeNext();
    }
    return true;
  }

  /** Resolves once the lines written so far are in the file (or went to the fallback). */
  flush(): Promise<void> {
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private writeNext(): void {
    if (this.pending.length === 0) {
      this.writing = false;
      for (const resolve of this.waiters.splice(0)) resolve();
      return;
    }
    this.writing = true;
    const chunk = Buffer.from(this.takeBatch());
    this.rotateIfFull();
    this.writeAll(chunk, 0, (error) => {
      if (error) return this.fail(error, chunk);
      this.size += chunk.length;
      this.writeNext();
    });
  }

  /**
   * The next lines to write, at most about `rotateBytes` of them (at least one line): a flood that
   * piled up while a slow write was under way (a busy machine) would otherwise go out as one batch
   * and grow the file past its rotation size by all of it.
   */
  private takeBatch(): string {
    const limit = this.options.rotateBytes ?? Infinity;
    let bytes = 0;
    let count = 0;
    while (count < this.pending.length && (count === 0 || bytes + this.pending[count]!.length <= limit)) {
      bytes += this.pending[count]!.length;
      count++;
    }
    return this.pending.splice(0, count).join('');
  }

  /** Between batches: past rotateBytes, the file becomes `.1` and a new one is opened. */
  private rotateIfFull(): void {
    const { rotateBytes, path, mode } = this.options;
    if (rotateBytes === undefined || this.size <= rotateBytes) return;
    try {
      renameSync(path, `${path}.1`);
      const next = openSync(path, 'a', mode);
      closeSync(this.fd);
      this.fd = next;
      this.size = 0;
    } catch {
      // Cannot rotate (the directory went read-only...): keep writing where we were; a failing
      // write goes to the fallback as any other.
    }
  }

  private writeAll(chunk: Buffer, offset: number, done: (error: NodeJS.ErrnoException | null) => void): void {
    write(this.fd, chunk, offset, chunk.length - offset, null, (error, written) => {
      if (error) done(error);
      else if (offset + written < chunk.length) this.writeAll(chunk, offset + written, done);
      else done(null);
    });
  }

  private fail(error: NodeJS.ErrnoException, chunk: Buffer): void {
    const reason = error.code ?? error.message;
    this.failedWith = reason;
    this.writing = false;
    this.options.notice(
      `runner: cannot write the log file ${this.options.path} (${reason}); logging to stderr, ` +
        `trying the file again every ${Math.round(this.retryMs / 1000)} s`,
    );
    for (const line of [...chunk.toString('utf8').split(/(?<=\n)/), ...this.pending]) {
      if (line !== '') this.options.fallback(line);
    }
    this.pending = [];
    for (const resolve of this.waiters.splice(0)) resolve();
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    setTimeout(() => this.retry(), this.retryMs).unref();
  }

  /** Appends a line saying where the missing lines went; the file is back once that lands. */
  private retry(): void {
    const line = `${JSON.stringify({
      level: 'warn',
      timestamp: new Date().toISOString(),
      message: `lines logged while this file could not be written (${this.failedWith}) went to stderr`,
    })}\n`;
    this.writeAll(Buffer.from(line), 0, (error) => {
      if (error) return this.scheduleRetry();
      this.failedWith = null;
      this.options.notice(`runner: the log file ${this.options.path} can be written again; logging there`);
    });
  }

  /** Lines still queued when the process exits: one synchronous attempt, never a retry loop. */
  writeRemainingSync(): void {
    if (this.failedWith !== null || this.pending.length === 0) return;
    try {
      writeSync(this.fd, this.pending.join(''));
    } catch {
      // Exiting: the lines cannot be kept anywhere better, and retrying would hang the exit.
    }
  }
}
