import { statSync } from 'node:fs';
import type { LuaCallContext, LuaValue } from '@runner/plugin-sdk';
import {
  confinedCommand,
  formatDuration,
  parseDurationArgument,
  PROCESS_GROUP_GRACE_MS,
  stopProcessGroup,
} from '@runner/plugin-sdk';
import type { Launcher } from './launcher.js';
import type { ProcessGroupWatch } from './process-groups.js';
import { isLuaTable, luaType } from '@runner/plugin-sdk';

/** Per stream. Config-free: enough for any log a script should hold in memory, small enough to survive a `yes`. */
export const OUTPUT_CAP_BYTES = 10 * 1024 * 1024;
/** Between SIGTERM and SIGKILL to the process group, and before giving up on pipes held open after that. */
export const KILL_GRACE_MS = PROCESS_GROUP_GRACE_MS;
/** A line longer than this is logged in pieces, so one endless line cannot grow the pending buffer. */
const MAX_LOG_LINE_BYTES = 16 * 1024;

const OPTIONS = ['cwd', 'env', 'timeout', 'stdin'] as const;

interface Command {
  file: string;
  args: string[];
  /** How messages show the command. */
  display: string;
}

interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  stdin?: string;
}

/**
 * Words separated by single spaces, of characters the shell takes literally anywhere in a word
 * (no quotes, `$`, globs, `~`, redirections, `;`, `&`, `|`, `#`, tabs or newlines). Such a
 * command means the same run through /bin/sh or started directly.
 */
const PLAIN_COMMAND = /^[A-Za-z0-9_./:,+@%=-]+(?: [A-Za-z0-9_./:,+@%=-]+)*$/;

function parseCommand(cmd: LuaValue): Command {
  if (typeof cmd === 'string') {
    if (cmd.trim() === '') throw new Error('exec.run: argument 1 must not be an empty command');
    // Plain words with the program given by its path: /bin/sh would only start (about 1 ms a
    // command, a sixth of a short task) and then run that program with those arguments.
    if (PLAIN_COMMAND.test(cmd)) {
      const [file, ...args] = cmd.split(' ');
      if (file.includes('/') && !file.includes('=')) return { file, args, display: cmd };
    }
    return { file: '/bin/sh', args: ['-c', cmd], display: cmd };
  }
  if (Array.isArray(cmd)) {
    if (cmd.length === 0) throw new Error('exec.run: argument 1 must not be an empty list');
    const argv = cmd.map((part, i) => {
      // Numbers are accepted because `{"sleep", 5}` is what people write.
      if (typeof part === 'string') return part;
      if (typeof part === 'number') return String(part);
      throw new Error(`exec.run: argument 1[${i + 1}] must be a string, got ${luaType(part)}`);
    });
    if (argv[0] === '') throw new Error('exec.run: argument 1[1] (the program) must not be empty');
    return { file: argv[0], args: argv.slice(1), display: argv.map(quoteForDisplay).join(' ') };
  }
  throw new Error(`exec.run: argument 1 must be a string or a list of strings, got ${luaType(cmd)}`);
}

function quoteForDisplay(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function parseOptions(opts: LuaValue): RunOptions {
  if (opts === null || opts === undefined) return {};
  if (!isLuaTable(opts)) throw new Error(`exec.run: argument 2 must be a table of options, got ${luaType(opts)}`);
  if (Array.isArray(opts)) {
    if (opts.length === 0) return {};
    throw new Error('exec.run: argument 2 must be a table with named options (cwd, env, timeout, stdin), got a list');
  }
  for (const key of Object.keys(opts)) {
    if (!(OPTIONS as readonly string[]).includes(key)) {
      throw new Error(`exec.run: unknown option "${key}" (known: ${OPTIONS.join(', ')})`);
    }
  }
  const result: RunOptions = {};
  if (opts.cwd !== undefined && opts.cwd !== null) {
    if (typeof opts.cwd !== 'string' || opts.cwd === '') {
      throw new Error(`exec.run: option cwd must be a non-empty string, got ${luaType(opts.cwd)}`);
    }
    result.cwd = opts.cwd;
  }
  if (opts.env !== undefined && opts.env !== null) {
    if (!isLuaTable(opts.env) || (Array.isArray(opts.env) && opts.env.length > 0)) {
      throw new Error(`exec.run: option env must be a table of NAME = value, got ${luaType(opts.env)}`);
    }
    const env: NodeJS.ProcessEnv = childEnvironment();
    for (const [name, value] of Object.entries(opts.env)) {
      if (name === '' || name.includes('=') || name.includes('\0')) {
        throw new Error(`exec.run: option env has an invalid variable name ${JSON.stringify(name)}`);
      }
      // `false` removes a variable: the only way to unset one, since a nil value is no entry at all.
      if (value === false) delete env[name];
      else if (typeof value === 'string' || typeof value === 'number' || value === true) env[name] = String(value);
      else throw new Error(`exec.run: option env.${name} must be a string, number or false, got ${luaType(value)}`);
    }
    result.env = env;
  }
  if (opts.timeout !== undefined && opts.timeout !== null) {
    const ms = parseDurationArgument(opts.timeout, 'exec.run: option timeout');
    if (ms <= 0) throw new Error('exec.run: option timeout must be greater than zero');
    result.timeoutMs = ms;
  }
  if (opts.stdin !== undefined && opts.stdin !== null) {
    if (typeof opts.stdin !== 'string') {
      throw new Error(`exec.run: option stdin must be a string, got ${luaType(opts.stdin)}`);
    }
    result.stdin = opts.stdin;
  }
  return result;
}

/** Collects one output stream up to the cap and hands complete lines to the log. */
class OutputSink {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  truncated = false;
  private pending: Buffer | undefined;

  constructor(
    private readonly log: (line: string) => void,
    private readonly cap: number,
  ) {}

  push(chunk: Buffer): void {
    if (this.truncated) return; // keep draining the pipe so the child never blocks, but hold nothing more
    const room = this.cap - this.bytes;
    if (chunk.length > room) {
      chunk = chunk.subarray(0, room);
      this.truncated = true;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    this.logLines(chunk);
  }

  private logLines(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(10);
    while (nl !== -1) {
      const piece = chunk.subarray(start, nl);
      const line = this.pending ? Buffer.concat([this.pending, piece]) : piece;
      this.pending = undefined;
      this.log(line.toString('utf8').replace(/\r$/, ''));
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pending = this.pending ? Buffer.concat([this.pending, rest]) : Buffer.from(rest);
      if (this.pending.length >= MAX_LOG_LINE_BYTES) this.flush();
    }
  }

  flush(): void {
    if (this.pending && this.pending.length > 0) this.log(this.pending.toString('utf8'));
    this.pending = undefined;
  }

  text(): string {
    return this.chunks.length === 1 ? this.chunks[0].toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
  }
}

function directoryMissing(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return true;
  }
}

/** The `exec` module over a launcher (the plugin's is a helper process; see launcher.ts). */
export function createExecModule(
  launcher: Launcher,
  groups?: ProcessGroupWatch,
): {
  run: (call: LuaCallContext, ...args: LuaValue[]) => Promise<LuaValue> | LuaValue;
} {
  return { run: (call, cmd, opts) => run(launcher, call, cmd, opts, groups) };
}

/** `exec.run(cmd [, opts])`. */
function run(
  launcher: Launcher,
  call: LuaCallContext,
  cmd: LuaValue,
  opts?: LuaValue,
  groups?: ProcessGroupWatch,
): Promise<LuaValue> | LuaValue {
  const command = parseCommand(cmd);
  const options = parseOptions(opts);
  if (call.dryRun) {
    return {
      stdout: '',
      stderr: '',
      // 0, not nil: scripts written as `if r.exit_code ~= 0 then error(...)` must pass in dry-run.
      exit_code: 0,
      success: true,
      skipped: true,
      note: `dry-run: would run: ${command.display}${options.cwd ? ` (in ${options.cwd})` : ''}`,
    };
  }
  if (call.signal.aborted) throw new Error(`exec.run: cancelled before starting: ${command.display}`);
  return execute(launcher, call, command, options, groups);
}

function execute(
  launcher: Launcher,
  call: LuaCallContext,
  command: Command,
  options: RunOptions,
  groups?: ProcessGroupWatch,
): Promise<LuaValue> {
  const started = performance.now();
  const logger = call.logger;
  return new Promise<LuaValue>((resolve, reject) => {
    const stdout = new OutputSink((line) => logger.debug(line, { stream: 'stdout' }), OUTPUT_CAP_BYTES);
    const stderr = new OutputSink((line) => logger.debug(line, { stream: 'stderr' }), OUTPUT_CAP_BYTES);
    let pid: number | undefined;
    let timedOut = false;
    let cancelled = false;
    let spawnError: { code?: string; message: string } | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let timer: NodeJS.Timeout | undefined;
    let pipeTimer: NodeJS.Timeout | undefined;
    let terminating = false;
    // Reported for a run, so a master that dies with it running can kill the group when it restarts.
    let groupEnded = (): void => {};

    const terminate = (): void => {
      if (terminating) return;
      terminating = true;
      // Before the pid is known, the pid event does this.
      // The whole group, so `sh -c "a | b"` and what it started go too; SIGKILL after the grace.
      stopProcessGroup(pid, KILL_GRACE_MS);
    };
    const onAbort = (): void => {
      cancelled = true;
      terminate();
    };

    const launched = launcher.launch(
      {
        // Under resources.* when the master or agent set them (the cgroups, resource limits).
        ...confinedCommand(command.file, command.args),
        cwd: options.cwd ?? process.cwd(),
        env: options.env ?? childEnvironment(),
        stdin: options.stdin,
        cap: OUTPUT_CAP_BYTES,
      },
      {
        pid(p) {
          pid = p;
          if (groups && call.run) groupEnded = groups.started({ runId: call.run.runId, task: call.run.task, pgid: p });
          logger.debug(`exec.run: ${command.display}`, { pid: p });
          if (terminating) stopProcessGroup(p, KILL_GRACE_MS);
        },
        data(fd, chunk) {
          (fd === 1 ? stdout : stderr).push(chunk);
        },
        error(code, message) {
          spawnError = { code, message };
        },
        exit(code, signal) {
          exitCode = code;
          exitSignal = signal;
          if (terminating) {
            // A descendant that left the group (setsid) may hold the pipes open forever; after a
            // timeout or cancel, stop waiting for it.
            pipeTimer = setTimeout(() => launched.release(), KILL_GRACE_MS);
          }
        },
        close() {
          // At close, not exit: what the leader left running in its group holds the pipes until then.
          groupEnded();
          clearTimeout(timer);
          clearTimeout(pipeTimer);
          call.signal.removeEventListener('abort', onAbort);
          stdout.flush();
          stderr.flush();
          finish();
        },
      },
    );
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        terminate();
      }, options.timeoutMs);
    }
    call.signal.addEventListener('abort', onAbort, { once: true });

    function finish(): void {
      const duration = (performance.now() - started) / 1000;
      if (spawnError) {
        if (spawnError.code === 'EHELPER') {
          reject(new Error(`exec.run: ${spawnError.message}: ${command.display}`));
          return;
        }
        if (options.cwd !== undefined && spawnError.code === 'ENOENT' && directoryMissing(options.cwd)) {
          reject(new Error(`exec.run: cwd ${JSON.stringify(options.cwd)} does not exist or is not a directory`));
          return;
        }
        // Like a shell: 127 for a program that is not there, 126 for one that cannot run, so a
        // script checks `r.success` the same way for both forms of command.
        const code = spawnError.code === 'ENOENT' ? 127 : 126;
        const reason =
          spawnError.code === 'ENOENT'
            ? 'program not found'
            : `cannot run program (${spawnError.code ?? spawnError.message})`;
        const message = `exec.run: ${reason}: ${command.file}`;
        logger.debug(message, { stream: 'stderr' });
        resolve({ stdout: '', stderr: `${message}\n`, exit_code: code, success: false, duration });
        return;
      }
      if (cancelled) {
        reject(new Error(`exec.run: cancelled: ${command.display}`));
        return;
      }
      const result: Record<string, LuaValue> = {
        stdout: stdout.text(),
        stderr: stderr.text(),
        exit_code: exitCode,
        success: exitCode === 0 && !timedOut,
        duration,
      };
      if (exitSignal) result.signal = exitSignal;
      if (timedOut) result.timed_out = true;
      if (stdout.truncated || stderr.truncated) result.truncated = true;
      logger.debug(
        timedOut
          ? `exec.run: timed out after ${formatDuration(options.timeoutMs!)}: ${command.display}`
          : `exec.run: exited ${exitSignal ? `on ${exitSignal}` : exitCode}: ${command.display}`,
        { exit_code: exitCode, signal: exitSignal ?? undefined, duration },
      );
      resolve(result);
    }
  });
}

/**
 * The runner's environment without its own `RUNNER_*` variables: they hold credentials (the join
 * token, RUNNER_TOKEN, the admin password) that a child, and the run records holding its output,
 * must not see. A workflow passes one on deliberately with `env`.
 */
export function childEnvironment(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(from)) if (!name.startsWith('RUNNER_')) env[name] = value;
  return env;
}
