import { spawn } from 'node:child_process';
import { InvalidInputError, RunnerError } from './errors.js';
import type { LuaCallContext } from './lua-module.js';
import { PROCESS_GROUP_GRACE_MS, stopProcessGroup } from './process-group.js';
import { confinedCommand } from './resource-limits.js';

/**
 * Running the command-line tool a module wraps (`docker`, `terraform`, `ansible-playbook`, `helm`):
 * what modules that drive a CLI share. The tool runs in a process group of its own, under the
 * owner's resource limits (confinedCommand), with the runner's environment less its own
 * `RUNNER_*` variables (they hold credentials) plus `env`; the task's cancellation stops the whole
 * group. Output is captured, capped, and never logged here: a module logs what it chooses, so a
 * credential passed on a command line or printed by a tool does not reach the task's log.
 */
export interface ToolCommand {
  /** The program (found on PATH) and its arguments: never through a shell. */
  file: string;
  args: readonly string[];
  cwd?: string;
  /** Merged over the runner's environment. */
  env?: Readonly<Record<string, string>>;
  /** Written to the tool's standard input; otherwise it reads nothing. */
  stdin?: string;
  /** The group is stopped after this many milliseconds and the result says timedOut. */
  timeoutMs?: number;
}

export interface ToolResult {
  /** Exit code; null when a signal (or the timeout) ended it. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Per stream: a tool's JSON (a large plan, `kubectl get -A`) fits; a runaway log does not fill memory. */
export const TOOL_OUTPUT_CAP_BYTES = 32 * 1024 * 1024;

/** The environment a tool starts with: the runner's, without RUNNER_* (credentials), plus `extra`. */
export function toolEnvironment(
  extra: Readonly<Record<string, string>> = {},
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(from)) if (!name.startsWith('RUNNER_')) env[name] = value;
  return { ...env, ...extra };
}

/**
 * Runs a tool to its end. Resolves whatever its exit status (check `code`); rejects when the
 * program cannot be started (naming it, so "docker is not installed" reads as such) and when the
 * task is cancelled.
 */
export function runTool(call: Pick<LuaCallContext, 'signal'>, command: ToolCommand): Promise<ToolResult> {
  if (call.signal.aborted)
    return Promise.reject(new RunnerError('cancelled', `${command.file}: cancelled before starting`));
  return new Promise((resolve, reject) => {
    const { file, args } = confinedCommand(command.file, command.args);
    const child = spawn(file, args, {
      cwd: command.cwd,
      env: toolEnvironment(command.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const stdout = new CappedText();
    const stderr = new CappedText();
    let timedOut = false;
    let cancelled = false;
    const stop = (): void => stopProcessGroup(child.pid, PROCESS_GROUP_GRACE_MS);
    const onAbort = (): void => {
      cancelled = true;
      stop();
    };
    call.signal.addEventListener('abort', onAbort, { once: true });
    const timer =
      command.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            stop();
          }, command.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A tool that exits without reading its stdin makes the write fail with EPIPE: not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(command.stdin ?? null);
    const settle = (): void => {
      clearTimeout(timer);
      call.signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      settle();
      reject(
        error.code === 'ENOENT'
          ? new InvalidInputError(`${command.file} is not installed on this host (not found on PATH)`)
          : new RunnerError('internal', `${command.file}: cannot start: ${error.message}`, { cause: error }),
      );
    });
    child.on('close', (code) => {
      settle();
      if (cancelled) reject(new RunnerError('cancelled', `${command.file}: cancelled`));
      else resolve({ code, stdout: stdout.text(), stderr: stderr.text(), timedOut });
    });
  });
}

/** The first lines of a tool's error output, for an error message that stays readable. */
export function toolFailure(tool: string, what: string, result: ToolResult): RunnerError {
  const why = result.timedOut
    ? 'timed out'
    : (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-8).join('\n') || `exit code ${result.code}`;
  return new RunnerError('failed', `${tool}: ${what} failed: ${why}`, { details: { exit_code: result.code } });
}

class CappedText {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  push(chunk: Buffer): void {
    const room = TOOL_OUTPUT_CAP_BYTES - this.bytes;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.bytes += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
