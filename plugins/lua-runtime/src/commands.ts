import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { confinedCommand, stopProcessGroup } from '@runner/plugin-sdk';

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

/**
 * Runs `command` through `/bin/sh -c`, as C's system() and popen() do. When `signal` aborts, its
 * process group is stopped (SIGTERM, then SIGKILL): the shell's children too, which killing the
 * shell alone left running (a cancelled run's `sleep 300` lived on).
 */
export function runShell(command: string, options: CommandOptions): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    // Under resources.* when the master or agent set them (the cgroups, resource limits).
    const { file, args } = confinedCommand('/bin/sh', ['-c', command]);
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const stop = () => stopProcessGroup(child.pid);
    if (options.signal.aborted) stop();
    else options.signal.addEventListener('abort', stop, { once: true });
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
      options.signal.removeEventListener('abort', stop);
      reject(error);
    });
    child.on('close', (code, signal) => {
      options.signal.removeEventListener('abort', stop);
      resolve({ code, signal, stdout: options.captureStdout ? Buffer.concat(captured) : undefined });
    });
  });
}

/** The signal number Lua reports for `"signal"` results. */
export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
