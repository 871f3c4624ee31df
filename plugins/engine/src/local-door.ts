import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  EXECUTOR_COMMAND,
  fromExecutorError,
  isRunnerError,
  joinCgroup,
  checkFreeSpace,
  OWNER_VARIABLE,
  RunnerError,
  toExecutorError,
  type ExecutorToMaster,
  type ForwardedCallHandler,
  type Logger,
  type Confinement,
  type LuaRunOptions,
  type LuaRunResult,
  type LuaRuntime,
  type MasterToExecutor,
  type WorkflowMetricsSink,
} from '@runner/plugin-sdk';
import type { RunAs } from './run-as.js';

/** How long the executor gets to stop its tasks when the master stops, before SIGKILL. */
const STOP_GRACE_MS = 5_000;

export interface LocalDoorOptions {
  runAs: RunAs;
  runtime: LuaRuntime;
  logger: Logger;
  /**
   * The handlers of the module calls the executor forwards, by module (`state` from module-state's
   * service, others registered through ExecutorCallServer); a call of a module without one is refused.
   */
  calls?: ReadonlyMap<string, ForwardedCallHandler>;
  /** Where `metrics.*` of the scripts the executor runs is recorded (module-metrics' sink, once attached). */
  metrics?: () => WorkflowMetricsSink | undefined;
  /** The `runner` command the executor is started with. */
  bin?: string;
  /** Bytes of a task's log the executor sends (engine.task_log_bytes: what the record keeps). */
  logBytes?: number;
  /**
   * Settings the executor boots with, as `RUNNER_*` variables (it cannot read the master's
   * config file): the master's `lua.*`, so scripts run there as they would in the master.
   */
  settings?: Record<string, string>;
  /** This master's mark on its executor and every command it starts (ownerMark of its data directory). */
  owner?: string;
  /** The cgroup the executor is put in at its start (ownerCgroup), so its commands cannot leave it. */
  cgroup?: string;
  /** resources.disk.min_free: below this many free bytes on `diskPath` side effects are refused. */
  minFreeBytes?: number;
  /** The file system whose free space counts (the master's data directory). */
  diskPath?: string;
  /** resources.cpu.limit and resources.memory.limit: the cgroups the executor is put in (with its commands). */
  confinement?: Confinement;
}

/** How long past a task's timeout the master waits for the executor to report it stopped. */
const TIMEOUT_BACKSTOP_MS = 5_000;

/** What a task's log gets besides its lines: the count the executor did not send. */
export interface DoorLog {
  drop(count: number): void;
}

interface Pending {
  options: LuaRunOptions;
  log?: DoorLog;
  /** Aborted when the task ends: its forwarded calls still under way (an SSH command) stop with it. */
  ended: AbortController;
  resolve(result: LuaRunResult): void;
  reject(error: Error): void;
}

/**
 * The one door through which a master runs workflow code that may reach its host (files,
 * processes, the network): every local task script goes through `run`. A script proven to reach
 * nothing outside its Lua state (`LuaRuntime.sideEffectFree`) runs in the master's own runtime;
 * any other runs as `engine.run_as`: in the local executor, a `runner executor` child started as
 * that user (so the kernel, not this code, decides what it may open), or in the master itself
 * with `self`, or is refused with the reason and how to allow it. Hooks and schedules start runs
 * through the engine, so their scripts come through here too.
 */
export class LocalDoor {
  readonly #options: LocalDoorOptions;
  #child: { process: ChildProcess; ready: Promise<void> } | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #stopped = false;

  constructor(options: LocalDoorOptions) {
    this.#options = options;
  }

  /** Who side effects run as, for logs and errors. */
  describe(): string {
    const { runAs } = this.#options;
    return runAs.kind === 'user'
      ? `user ${runAs.name} (uid ${runAs.uid})`
      : runAs.kind === 'self'
        ? "the master's own user"
        : 'refused';
  }

  run(source: string, options: LuaRunOptions, log?: DoorLog): Promise<LuaRunResult> {
    const { runAs, runtime } = this.#options;
    const { minFreeBytes } = this.#options;
    if ((runAs.kind === 'self' && !minFreeBytes) || runtime.sideEffectFree?.(source))
      return runtime.run(source, options);
    if (runAs.kind === 'refused') return Promise.reject(new RunnerError('forbidden', runAs.reason, { status: 403 }));
    return this.#checkDisk().then(() =>
      runAs.kind === 'self' ? runtime.run(source, options) : this.#viaExecutor(source, options, log),
    );
  }

  /** Refuses a task while the disk has less free space than resources.disk.min_free. */
  async #checkDisk(): Promise<void> {
    const { minFreeBytes, diskPath } = this.#options;
    if (minFreeBytes && diskPath) await checkFreeSpace(diskPath, minFreeBytes);
  }

  /** Ends the executor: its tasks are stopped (their commands killed), then it exits. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const child = this.#child?.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    // Empty once its commands ended with it; one left running keeps it for the next start's sweep.
    if (this.#options.cgroup) await rmdir(this.#options.cgroup).catch(() => {});
    this.#options.confinement?.release();
  }

  async #viaExecutor(source: string, options: LuaRunOptions, log?: DoorLog): Promise<LuaRunResult> {
    if (this.#stopped) throw new RunnerError('unavailable', 'the local executor has stopped', { status: 503 });
    const child = this.#executor();
    await child.ready;
    const id = this.#nextId++;
    const { signal } = options;
    return new Promise<LuaRunResult>((resolve, reject) => {
      const onAbort = () => {
        const reason = isRunnerError(signal?.reason)
          ? signal.reason
          : new RunnerError('timeout', 'stopped', { status: 504 });
        this.#send({ type: 'cancel', id, reason: toExecutorError(reason) });
      };
      // The executor stops a script at its timeout itself; should it not answer (busy, stuck),
      // the task still ends here, and the executor is told to stop it.
      const backstop =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              const error = new RunnerError(
                'timeout',
                `timed out after ${options.timeoutMs} ms (the local executor did not stop the script in time)`,
                { status: 504 },
              );
              this.#send({ type: 'cancel', id, reason: toExecutorError(error) });
              this.#pending.get(id)?.reject(error);
            }, options.timeoutMs + TIMEOUT_BACKSTOP_MS);
      const ended = new AbortController();
      const settle = () => {
        clearTimeout(backstop);
        this.#pending.delete(id);
        signal?.removeEventListener('abort', onAbort);
        ended.abort(new RunnerError('cancelled', 'the task ended', { status: 409 }));
      };
      this.#pending.set(id, {
        options,
        log,
        ended,
        resolve: (result) => (settle(), resolve(result)),
        reject: (error) => (settle(), reject(error)),
      });
      this.#send({
        type: 'run',
        task: {
          id,
          source,
          chunkName: options.chunkName,
          globals: { ...options.globals },
          dryRun: options.dryRun ?? false,
          timeoutMs: options.timeoutMs,
          memoryLimitBytes: options.memoryLimitBytes,
          // os.execute and io.popen commands get this env: the owner's mark goes with it.
          env: this.#options.owner
            ? { ...(options.env ?? {}), [OWNER_VARIABLE]: this.#options.owner }
            : options.env && { ...options.env },
          cwd: options.cwd,
          run: options.run,
          logBytes: this.#options.logBytes,
        },
      });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #executor(): { process: ChildProcess; ready: Promise<void> } {
    if (this.#child) return this.#child;
    const { runAs, logger } = this.#options;
    if (runAs.kind !== 'user') throw new Error('the local executor runs only as another user');
    const child = spawn(
      process.execPath,
      [this.#options.bin ?? runnerBin(), EXECUTOR_COMMAND, '--data-dir', runAs.home],
      {
        uid: runAs.uid,
        gid: runAs.gid,
        cwd: runAs.home,
        // The executor's own environment: enough to start Node. What scripts see is each task's
        // `env` (engine.script_env), sent with the task.
        env: { ...executorEnvironment(runAs, this.#options.owner), ...this.#options.settings },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        serialization: 'advanced',
      },
    );
    // Before it has loaded, so before any command of it exists: they all start inside.
    if (this.#options.cgroup && child.pid !== undefined && !joinCgroup(this.#options.cgroup, child.pid))
      logger.warn(
        `could not put the local executor in ${this.#options.cgroup}; commands that clear their environment escape the sweep`,
      );
    const { confinement } = this.#options;
    if (confinement?.cgroups.length && child.pid !== undefined && !confinement.enter(child.pid))
      logger.warn(`could not put the local executor in ${confinement.cgroups.join(', ')}: its tasks are not limited`);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-4096);
      for (const line of text.split('\n')) if (line.trim()) logger.warn(`local executor: ${line}`);
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: ExecutorToMaster) => {
        if (message.type === 'ready') {
          logger.info(`local executor started: pid ${message.pid}, ${this.describe()}`);
          resolve();
        } else this.#receive(message);
      });
      child.once('error', (error) => reject(this.#lost(child, `could not start: ${error.message}`)));
      child.once('exit', (code, signalName) => {
        const how = signalName ? `by ${signalName}` : `with code ${code}`;
        const error = this.#lost(child, `ended ${how}${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`);
        reject(error);
        for (const pending of this.#pending.values()) pending.reject(error);
        if (this.#child?.process === child) this.#child = undefined;
      });
    });
    ready.catch(() => {});
    this.#child = { process: child, ready };
    return this.#child;
  }

  #lost(child: ChildProcess, what: string): RunnerError {
    return new RunnerError('executor_lost', `the local executor (pid ${child.pid}, ${this.describe()}) ${what}`, {
      status: 502,
    });
  }

  #receive(message: ExecutorToMaster): void {
    switch (message.type) {
      case 'log': {
        const pending = this.#pending.get(message.id);
        pending?.options.logger[message.level](message.message, message.fields);
        break;
      }
      case 'done': {
        const pending = this.#pending.get(message.id);
        if (!pending) break;
        if (message.droppedLogLines) pending.log?.drop(message.droppedLogLines);
        if (message.error) pending.reject(fromExecutorError(message.error));
        else pending.resolve({ values: message.values ?? [] });
        break;
      }
      case 'call':
        void this.#serveCall(message);
        break;
      case 'metric':
        this.#recordMetric(message);
        break;
    }
  }

  /**
   * A script's `metrics.*` call made in the executor, recorded here: a drop (a cap) or a misuse
   * (another kind or other labels than the name's first use) goes to the task's log, since the
   * script no longer waits for the call.
   */
  #recordMetric(message: Extract<ExecutorToMaster, { type: 'metric' }>): void {
    const pending = this.#pending.get(message.id);
    const workflow = pending?.options.run?.workflow;
    if (!pending || workflow === undefined) return;
    try {
      const dropped = this.#options.metrics?.()?.record(message.observation, workflow);
      if (dropped) pending.options.logger.warn(dropped);
    } catch (error) {
      pending.options.logger.warn((error as Error).message);
    }
  }

  /**
   * A module call a script made in the executor, served by its module's handler for the task that
   * asks, as this master recorded it (the executor only names the task).
   */
  async #serveCall(message: Extract<ExecutorToMaster, { type: 'call' }>): Promise<void> {
    const pending = this.#pending.get(message.id);
    const handler = this.#options.calls?.get(message.module);
    let reply: MasterToExecutor;
    try {
      if (!pending?.options.run)
        throw new RunnerError('not_found', `${message.module}: the task that asked is not running`);
      if (!handler)
        throw new RunnerError('unavailable', `${message.module}: not served by this master to its local executor`, {
          status: 503,
        });
      const { run, dryRun, signal } = pending.options;
      const caller = { workflow: run.workflow, task: run.task, runId: run.runId, dryRun: dryRun ?? false };
      const stop = signal ? AbortSignal.any([signal, pending.ended.signal]) : pending.ended.signal;
      reply = { type: 'call-result', callId: message.callId, answer: await handler(message.request, caller, stop) };
    } catch (error) {
      reply = { type: 'call-result', callId: message.callId, error: toExecutorError(error) };
    }
    this.#send(reply);
  }

  #send(message: MasterToExecutor): void {
    const child = this.#child?.process;
    if (child?.connected) child.send(message);
  }
}

/**
 * PATH and locale from the master; HOME, USER and LOGNAME of the executor's user; the owner's
 * mark, which exec.run's commands inherit from the executor's environment.
 */
function executorEnvironment(runAs: Extract<RunAs, { kind: 'user' }>, owner?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: runAs.home, USER: runAs.name, LOGNAME: runAs.name };
  if (owner) env[OWNER_VARIABLE] = owner;
  for (const name of ['PATH', 'LANG', 'LC_ALL', 'TZ']) if (process.env[name]) env[name] = process.env[name];
  return env;
}

/**
 * The `runner` command of this installation: the master's own (`kernel/bin/runner.js`), or, when
 * this process was not started by it (tests), the one found above the working directory.
 */
export function runnerBin(): string {
  const own = process.argv[1];
  if (own && /(^|[\\/])runner(\.js)?$/.test(own)) return own;
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    const candidate = join(dir, 'kernel', 'bin', 'runner.js');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir)
      throw new Error('cannot find the runner command (kernel/bin/runner.js) to start the local executor');
  }
}
