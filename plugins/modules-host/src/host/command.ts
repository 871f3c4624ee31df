import { execFile } from 'node:child_process';
import { confinedCommand } from '@runner/plugin-sdk';
import { childEnvironment } from '../exec/run.js';

/** What a command the modules run for themselves left: never raises for its exit status. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  signal?: AbortSignal;
  stdin?: string;
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

/** Output kept per stream: package managers and journals are chatty, a script needs the gist. */
const OUTPUT_CAP = 8 * 1024 * 1024;

/**
 * Runs a program with exactly these arguments (no shell) under the task's limits (confinedCommand)
 * and environment (without RUNNER_* credentials), as exec.run does. A program that is not there
 * gives code 127, as a shell would say it. Cancelling the task kills it.
 */
export function runCommand(argv: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
  const { file, args } = confinedCommand(argv[0], argv.slice(1));
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      {
        encoding: 'utf8',
        maxBuffer: OUTPUT_CAP,
        signal: options.signal,
        cwd: options.cwd,
        env: { ...childEnvironment(), LC_ALL: 'C', ...options.env },
      },
      (error, stdout, stderr) => {
        if (options.signal?.aborted) return reject(options.signal.reason ?? error);
        if (!error) return resolve({ code: 0, stdout, stderr });
        const { code, signal } = error as { code?: unknown; signal?: unknown };
        if (code === 'ENOENT') return resolve({ code: 127, stdout: '', stderr: `${argv[0]}: command not found` });
        if (typeof code === 'number') return resolve({ code, stdout, stderr });
        if (typeof signal === 'string') return resolve({ code: null, stdout, stderr: `${stderr}killed by ${signal}` });
        reject(new Error(`${argv[0]}: ${error.message}`));
      },
    );
    // A program that exits without reading its input closes the pipe: that is no error of ours.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.stdin ?? '');
  });
}

/** Runs it and raises with its stderr unless it succeeds: for the steps a module cannot go on without. */
export async function mustRun(what: string, argv: readonly string[], options: CommandOptions = {}): Promise<string> {
  const r = await runCommand(argv, options);
  if (r.code !== 0) {
    const why = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-5).join('\n');
    throw new Error(`${what}: ${argv.join(' ')} failed (exit ${r.code ?? 'by signal'}): ${why}`);
  }
  return r.stdout;
}

/** Whether a program is on PATH (or at that path). */
export async function haveProgram(name: string): Promise<boolean> {
  const r = await runCommand(['/bin/sh', '-c', `command -v "$1" >/dev/null`, 'sh', name]);
  return r.code === 0;
}
