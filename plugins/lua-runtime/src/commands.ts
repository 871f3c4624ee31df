import { spawn } from 'node:child_process';
import { constants } from 'node:os';

export interface CommandOutcome {
  /** Exit code, or null when a signal ended the command. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What the command wrote to stdout, when it was captured. */
  stdout?: Uint8Array;
}

export interface CommandOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  signal: AbortSignal;
  /** Bytes for the command's stdin; without them stdin is empty. */
  stdin?: Uint8Array;
  /** Collect stdout instead of streaming it to `onStdout`. */
  captureStdout: boolean;
  onStdout(chunk: Uint8Array): void;
  onStderr(chunk: Uint8Array): void;
}

/** Runs `command` through `/bin/sh -c`, as C's system() and popen() do. Killed when `signal` aborts. */
export function runShell(command: string, options: CommandOptions): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv,
      signal: options.signal,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const captured: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      if (options.captureStdout) captured.push(chunk);
      else options.onStdout(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => options.onStderr(chunk));
    // A command that exits without reading its stdin makes the write fail with EPIPE: not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? null);
    child.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code === 'ABORT_ERR') return;
      reject(error);
    });
    child.on('close', (code, signal) => {
      resolve({ code, signal, stdout: options.captureStdout ? Buffer.concat(captured) : undefined });
    });
  });
}

/** The signal number Lua reports for `"signal"` results. */
export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
