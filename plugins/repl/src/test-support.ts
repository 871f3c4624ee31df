import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../../..');
export const runnerBin = join(repoRoot, 'kernel/bin/runner.js');

export function tempDir(prefix = 'runner-repl-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Repl extends ChildProcess {
  out: { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `runner repl` (the built bin) with piped stdin, stdout and stderr. */
export function spawnRepl(options: { dataDir: string; cwd?: string; args?: string[] }): Repl {
  const child = spawn(process.execPath, [runnerBin, 'repl', ...(options.args ?? [])], {
    cwd: options.cwd ?? options.dataDir,
    env: { ...process.env, RUNNER_DATA_DIR: options.dataDir, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as Repl;
  child.out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (child.out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (child.out.stderr += d.toString()));
  child.exited = new Promise((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolvePromise({ code, signal }));
  });
  return child;
}

/** Pipes `input` into `runner repl` and collects everything it wrote. */
export async function pipeRepl(
  input: string,
  options: { dataDir: string; cwd?: string; args?: string[] },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnRepl(options);
  child.stdin!.end(input);
  const { code } = await child.exited;
  return { code, ...child.out };
}

/** Resolves once `stream` of the child has printed text matching `pattern`. */
export function outputMatching(child: Repl, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      if (pattern.test(child.out[stream])) {
        child[stream]!.off('data', onData);
        child.off('close', onClose);
        resolvePromise();
      }
    };
    const onData = () => setImmediate(check);
    const onClose = () =>
      reject(new Error(`runner repl exited before printing ${pattern}:\n${child.out.stdout}\n${child.out.stderr}`));
    child[stream]!.on('data', onData);
    child.once('close', onClose);
    check();
  });
}

/**
 * A tmux server of our own (its own socket), whose one pane runs a command in a real terminal.
 * The screen is read as tmux renders it, so assertions see what a person would see.
 */
export class TmuxPane {
  readonly #socket: string;
  readonly target = 'repl';

  constructor(dir: string) {
    this.#socket = join(dir, 'tmux.sock');
  }

  /**
   * Runs `command` through `sh`, which prints its exit status when it ends: tmux's own
   * `pane_dead_status` proved unreliable (the pane could stay a zombie, unreaped).
   */
  start(command: string, size = { columns: 200, rows: 40 }): void {
    const wrapped = `${command}; echo "[exited $?]"`;
    this.#tmux(
      'new-session',
      '-d',
      '-s',
      this.target,
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      'sh',
      '-c',
      wrapped,
    );
    // Keep the pane after the command exits, to read its last screen.
    this.#tmux('set-option', '-t', this.target, 'remain-on-exit', 'on');
  }

  /** Keys as tmux names them: text, `Enter`, `C-c`, `C-d`, `Up`. */
  keys(...keys: string[]): void {
    this.#tmux('send-keys', '-t', this.target, ...keys);
  }

  /** Sends literal text (no key names) followed by Enter. */
  line(text: string): void {
    this.#tmux('send-keys', '-t', this.target, '-l', text);
    this.#tmux('send-keys', '-t', this.target, 'Enter');
  }

  /** The visible lines, trailing spaces and trailing empty lines removed. */
  screen(): string[] {
    const text = this.#tmux('capture-pane', '-p', '-t', this.target);
    const lines = text.split('\n').map((l) => l.trimEnd());
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines;
  }

  /** Waits until the screen satisfies `done` (polling what tmux renders); fails with the screen. */
  async until(done: (lines: string[]) => boolean, what: string, timeoutMs = 15_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.screen();
      if (done(lines)) return lines;
      if (Date.now() > deadline) throw new Error(`screen never showed ${what}; it shows:\n${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Waits until the last lines of the screen are exactly `tail`. */
  untilTail(tail: string[], timeoutMs?: number): Promise<string[]> {
    return this.until(
      (lines) => lines.length >= tail.length && lines.slice(-tail.length).join('\n') === tail.join('\n'),
      JSON.stringify(tail),
      timeoutMs,
    );
  }

  /** Resolves with the command's exit status once it has ended. */
  async exited(timeoutMs = 15_000): Promise<number> {
    const lines = await this.until((l) => l.some((x) => /^\[exited \d+\]$/.test(x)), 'the command exiting', timeoutMs);
    return Number(/^\[exited (\d+)\]$/.exec(lines.find((x) => /^\[exited \d+\]$/.test(x))!)![1]);
  }

  stop(): void {
    try {
      this.#tmux('kill-server');
    } catch {
      // Already gone.
    }
  }

  #tmux(...args: string[]): string {
    return execFileSync('tmux', ['-S', this.#socket, ...args], { encoding: 'utf8' });
  }
}
