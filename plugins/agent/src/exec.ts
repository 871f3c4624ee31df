import { spawn } from 'node:child_process';
import { stopProcessGroup } from '@runner/plugin-sdk';
import type { ExecRequest__Output, ExecResponse } from '@runner/proto';

export interface ExecLimits {
  /** When the request gives no timeout. */
  defaultTimeoutMs: number;
  /** Each of stdout and stderr is cut past this (a note says so). */
  outputBytes: number;
}

/**
 * Runs a command for the master (`POST /agents/:name/exec`): a string through `/bin/sh -c`, a list
 * without a shell. On timeout or cancel its process group gets SIGTERM, then SIGKILL 2 s later.
 */
export function runCommand(
  request: ExecRequest__Output,
  limits: ExecLimits,
  signal: AbortSignal,
): Promise<ExecResponse> {
  const started = performance.now();
  const timeoutMs = request.timeout_ms || limits.defaultTimeoutMs;
  const [file, args] = request.command
    ? ['/bin/sh', ['-c', request.command]]
    : [request.argv[0], request.argv.slice(1)];
  return new Promise((resolve) => {
    const out = capped(limits.outputBytes);
    const err = capped(limits.outputBytes);
    let timedOut = false;
    // Its own process group, so a timeout also ends what the command started (a shell's children
    // would otherwise keep the output pipes open).
    const child = spawn(file, args, {
      cwd: request.cwd || undefined,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stop = () => stopProcessGroup(child.pid);
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    signal.addEventListener('abort', stop, { once: true });
    child.stdout.on('data', out.add);
    child.stderr.on('data', err.add);
    let finished = false;
    const finish = (exitCode: number | null, extra = '') => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      resolve({
        stdout: out.text(),
        stderr: err.text() + extra,
        exit_code: exitCode ?? 0,
        exited: exitCode !== null,
        timed_out: timedOut,
        duration: (performance.now() - started) / 1000,
      });
    };
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish(null, `${error.code === 'ENOENT' ? `${file}: command not found` : error.message}\n`),
    );
    child.on('close', (code) => finish(code));
  });
}

function capped(limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let dropped = 0;
  return {
    add: (chunk: Buffer) => {
      const room = limit - size;
      if (room <= 0) {
        dropped += chunk.length;
        return;
      }
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      size += kept.length;
      dropped += chunk.length - kept.length;
    },
    text: () =>
      Buffer.concat(chunks).toString('utf8') +
      (dropped ? `\n[output cut at ${limit} bytes; ${dropped} more bytes dropped]\n` : ''),
  };
}
