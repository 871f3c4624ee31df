import {
  fromExecutorError,
  luaLazyTable,
  RunnerError,
  toExecutorError,
  type ExecutorTask,
  type ExecutorToMaster,
  type LogFields,
  type Logger,
  type LuaRuntime,
  type LuaValue,
  type MasterCallForwarder,
  type MasterToExecutor,
  type StateAnswer,
  type StateForwarder,
  type StateRequest,
  type WorkflowMetricsForwarder,
} from '@runner/plugin-sdk';

/** What the server needs of its process: Node's IPC channel to the master. */
export interface ExecutorChannel {
  send?(message: ExecutorToMaster): boolean;
  /** False once the channel closed (Node's process.connected); sends are then dropped. */
  readonly connected?: boolean;
  on(event: 'message', listener: (message: MasterToExecutor) => void): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
}

/** How long tasks get to end (and kill their commands) once the master is gone. */
const END_GRACE_MS = 5_000;

/** A globals entry the master sent as a lazy table (`tasks`, `env`): it stays one here. */
function isLazy(value: LuaValue): value is LuaValue & { kind: 'lua-lazy-table'; source: Record<string, unknown> } {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'lua-lazy-table';
}

/**
 * Runs the master's local tasks in this process (the executor, an unprivileged user) and answers
 * on the channel: each task's log lines as they come, then its values or its error. When the
 * channel closes (the master ended, even by SIGKILL) every task is stopped, which kills the
 * commands it started, and `serve` resolves so the process exits.
 */
export class ExecutorServer implements StateForwarder {
  readonly #running = new Map<number, { task: ExecutorTask; controller: AbortController; done: Promise<void> }>();
  readonly #calls = new Map<number, { resolve(answer: unknown): void; reject(error: Error): void }>();
  #nextCall = 1;
  #ended = false;

  constructor(
    private readonly runtime: LuaRuntime,
    private readonly channel: ExecutorChannel,
  ) {}

  serve(): Promise<void> {
    // Scripts come here because they may loop or reach the host, so most of them run in a Lua
    // worker (lua.isolation: auto): compiling one such chunk starts a worker now, so the first
    // task's timeout is not spent starting it (the master warms its own the same way when it
    // compiles a workflow).
    this.runtime.compile('while true do end', 'warm-up');
    return new Promise((resolve) => {
      this.channel.on('message', (message) => this.#receive(message));
      this.channel.once('disconnect', () => void this.stop().then(resolve));
      // A master that ended while this process booted closed the channel before anyone listened:
      // its 'disconnect' is gone, and serving on would keep this process alive with no master.
      if (this.channel.connected === false) {
        void this.stop().then(resolve);
        return;
      }
      this.#send({ type: 'ready', pid: process.pid, uid: process.getuid?.() ?? -1 });
    });
  }

  /** Stops every task (their commands are killed) and waits a little for them to end. */
  async stop(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    const reason = new RunnerError('cancelled', 'cancelled: the master ended its local executor', { status: 409 });
    for (const { controller } of this.#running.values()) controller.abort(reason);
    for (const call of this.#calls.values()) call.reject(reason);
    const done = Promise.allSettled([...this.#running.values()].map((entry) => entry.done));
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, END_GRACE_MS).unref())]);
  }

  /** state.* of a task running here: a forwarded call the master serves from its store. */
  forward(request: StateRequest, run: { runId: string; task: string }, signal?: AbortSignal): Promise<StateAnswer> {
    return this.#forwardCall('state', request, run, signal).then((answer) => (answer ?? {}) as StateAnswer);
  }

  /** Module calls of the tasks running here, sent to the master (ssh.*; state.* above goes this way too). */
  readonly calls: MasterCallForwarder = {
    forward: (module, request, run, signal) => this.#forwardCall(module, request, run, signal),
  };

  #forwardCall(module: string, request: unknown, run: { runId: string; task: string }, signal?: AbortSignal) {
    // The master decides workflow, task and dry-run from its record of the task that asks; any
    // running unit of that task names the same ones.
    const asking = this.#runningTask(run);
    if (!asking) return Promise.reject(new RunnerError('not_found', `${module}: no such task running`));
    const callId = this.#nextCall++;
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = () => {
        this.#calls.delete(callId);
        reject(signal?.reason instanceof Error ? signal.reason : new RunnerError('cancelled', 'stopped'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        this.#calls.delete(callId);
        signal?.removeEventListener('abort', onAbort);
      };
      this.#calls.set(callId, {
        resolve: (answer) => (settle(), resolve(answer)),
        reject: (error) => (settle(), reject(error)),
      });
      this.#send({ type: 'call', callId, id: asking.task.id, module, request });
    });
  }

  /** Sends the Lua metrics calls of a running task to the master, which exports them (module-metrics). */
  readonly metrics: WorkflowMetricsForwarder = {
    forward: (observation, run) => {
      const asking = this.#runningTask(run);
      if (asking) this.#send({ type: 'metric', id: asking.task.id, observation });
    },
  };

  #runningTask(run: { runId: string; task: string }) {
    // Any running unit of that task names the same workflow.
    return [...this.#running.values()].find(({ task }) => task.run?.runId === run.runId && task.run?.task === run.task);
  }

  #receive(message: MasterToExecutor): void {
    switch (message.type) {
      case 'run':
        this.#start(message.task);
        break;
      case 'cancel':
        this.#running.get(message.id)?.controller.abort(fromExecutorError(message.reason));
        break;
      case 'call-result': {
        const call = this.#calls.get(message.callId);
        if (message.error) call?.reject(fromExecutorError(message.error));
        else call?.resolve(message.answer);
        break;
      }
    }
  }

  #start(task: ExecutorTask): void {
    const controller = new AbortController();
    // Known before the script starts: its first forwarded call (made before the run's first await)
    // looks the task up here.
    const entry = { task, controller, done: Promise.resolve() };
    this.#running.set(task.id, entry);
    entry.done = this.#run(task, controller.signal).finally(() => this.#running.delete(task.id));
  }

  async #run(task: ExecutorTask, signal: AbortSignal): Promise<void> {
    let reply: Extract<ExecutorToMaster, { type: 'done' }>;
    const sent = { bytes: 0, dropped: 0 };
    try {
      const globals = Object.fromEntries(
        Object.entries(task.globals).map(([name, value]) => [
          name,
          isLazy(value) ? (luaLazyTable(value.source) as unknown as LuaValue) : value,
        ]),
      );
      const { values } = await this.runtime.run(task.source, {
        chunkName: task.chunkName,
        globals,
        dryRun: task.dryRun,
        logger: this.#logger(task, {}, sent),
        signal,
        timeoutMs: task.timeoutMs,
        memoryLimitBytes: task.memoryLimitBytes,
        env: task.env,
        cwd: task.cwd,
        run: task.run,
      });
      reply = { type: 'done', id: task.id, values };
    } catch (error) {
      reply = { type: 'done', id: task.id, error: toExecutorError(error) };
    }
    if (sent.dropped) reply.droppedLogLines = sent.dropped;
    try {
      this.#send(reply);
    } catch (error) {
      // A value structured clone cannot copy (a function the script returned).
      this.#send({
        type: 'done',
        id: task.id,
        error: toExecutorError(
          new RunnerError('lua_error', `the script's return values cannot be sent to the master: ${String(error)}`, {
            status: 422,
          }),
        ),
      });
    }
  }

  /**
   * The task's log, sent line by line up to `task.logBytes` (see ExecutorTask): a script printing a
   * flood costs the master one line past its cap and a count, not a message per line.
   */
  #logger(task: ExecutorTask, bound: LogFields, sent: { bytes: number; dropped: number }): Logger {
    const { id } = task;
    const cap = task.logBytes ?? Number.POSITIVE_INFINITY;
    const emit = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: LogFields) => {
      const merged = Object.keys(bound).length ? { ...bound, ...fields } : fields;
      if (sent.bytes > cap) {
        sent.dropped++;
        return;
      }
      sent.bytes += message.length + (merged ? safeLength(merged) : 0) + 48;
      try {
        this.#send({ type: 'log', id, level, message, fields: merged });
      } catch {
        // Fields structured clone cannot copy: the line goes without them.
        this.#send({ type: 'log', id, level, message });
      }
    };
    return {
      debug: emit('debug'),
      info: emit('info'),
      warn: emit('warn'),
      error: emit('error'),
      child: (fields) => this.#logger(task, { ...bound, ...fields }, sent),
    };
  }

  #send(message: ExecutorToMaster): void {
    if (this.channel.connected === false) return;
    this.channel.send?.(message);
  }
}

function safeLength(fields: LogFields): number {
  try {
    return JSON.stringify(fields).length;
  } catch {
    return 0;
  }
}
