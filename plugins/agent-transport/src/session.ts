import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { AgentMessage__Output, LogEntry__Output, MasterMessage } from '@runner/proto';
import { AgentCallError, AgentLostError, AgentTimeoutError, AgentUnreachableError } from './errors.js';

/** The request bodies of MasterMessage, by the oneof name. */
export type MasterRequest = Pick<
  MasterMessage,
  'execute_task' | 'stream_logs' | 'get_metrics' | 'exec' | 'control' | 'open_terminal' | 'put_file' | 'get_file'
>;

/** The answer kinds of AgentMessage that complete a call. */
type Answer = 'task_result' | 'metrics' | 'exec_result' | 'control_result' | 'terminal_exit' | 'file_result';

/** What the master delegated with an ExecuteTask call: the state it lets the task reach follows from it. */
export interface DelegatedTask {
  runId: string;
  workflow: string;
  /** The task's name in the workflow file. */
  task: string;
  dryRun: boolean;
}

interface PendingCall {
  /** Names the call in errors: `the task`, `GetMetrics`. */
  what: string;
  delegated?: DelegatedTask;
  /** ExecuteTask: whether `start_task` was sent (a loss after that is `agent_lost`, not `unreachable`). */
  task: boolean;
  started: boolean;
  resolve(message: AgentMessage__Output): void;
  reject(error: Error): void;
  onLog?(entry: LogEntry__Output): void;
  onOutput?(data: Buffer): void;
  cleanup(): void;
}

export interface CallOptions {
  what: string;
  task?: boolean;
  /** ExecuteTask: the task it delegates. */
  delegated?: DelegatedTask;
  /** No deadline when absent (a task runs as long as its agent is alive). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** What an abort rejects with (default: the signal's reason). */
  abortError?: () => Error;
  onLog?(entry: LogEntry__Output): void;
  /** OpenTerminal: what the shell printed. */
  onOutput?(data: Buffer): void;
  /** Told the call's id as it is sent (a terminal's input goes with it). */
  onId?(id: number): void;
}

/**
 * One connected agent: its Connect stream and the calls in flight on it. Every call settles: with
 * its answer, its deadline, its abort signal, or the session's end, whichever comes first, so
 * nothing waiting on an agent can hang once the agent is gone.
 */
export class AgentSession {
  lastSeen = Date.now();
  closed = false;
  closeReason = '';
  private readonly pending = new Map<number, PendingCall>();
  private nextId = 1;

  constructor(
    readonly name: string,
    readonly address: string,
    private readonly call: ServerDuplexStream<AgentMessage__Output, MasterMessage>,
    private readonly onClose: (session: AgentSession, reason: string) => void,
  ) {}

  get inFlight(): number {
    return this.pending.size;
  }

  send(message: MasterMessage): void {
    if (!this.closed) this.call.write(message);
  }

  /** Sends a request and resolves with the agent's answer. */
  request(body: MasterRequest, options: CallOptions): Promise<AgentMessage__Output> {
    if (this.closed) return Promise.reject(new AgentUnreachableError(this.name, this.closeReason || 'disconnected'));
    if (options.signal?.aborted) return Promise.reject(abortReason(options));
    // Ids wrap within uint32; a call that old is long settled.
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffffffff ? 1 : this.nextId + 1;
    return new Promise<AgentMessage__Output>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        this.send({
          call_id: id,
          cancel: { reason: String((options.signal?.reason as Error)?.message ?? 'cancelled') },
        });
        settle(() => reject(abortReason(options)));
      };
      const settle = (finish: () => void) => {
        if (!this.pending.has(id)) return;
        this.pending.get(id)?.cleanup();
        this.pending.delete(id);
        finish();
      };
      this.pending.set(id, {
        what: options.what,
        task: options.task === true,
        delegated: options.delegated,
        started: false,
        resolve: (message) => settle(() => resolve(message)),
        reject: (error) => settle(() => reject(error)),
        onLog: options.onLog,
        onOutput: options.onOutput,
        cleanup: () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
        },
      });
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.send({ call_id: id, cancel: { reason: 'deadline exceeded' } });
          settle(() => reject(new AgentTimeoutError(this.name, options.what, options.timeoutMs as number)));
        }, options.timeoutMs);
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      options.onId?.(id);
      this.send({ call_id: id, ...body });
    });
  }

  /** A task of `runId` named `task` that this agent runs now (started, not answered yet). */
  runningTask(runId: string, task: string): DelegatedTask | undefined {
    for (const call of this.pending.values()) {
      if (call.started && call.delegated?.runId === runId && call.delegated.task === task) return call.delegated;
    }
    return undefined;
  }

  /** An answer, log line or acknowledgement for a call in flight. Late ones (after a cancel) are dropped. */
  deliver(message: AgentMessage__Output): void {
    const call = this.pending.get(message.call_id);
    if (!call) return;
    switch (message.body) {
      case 'task_accepted':
        // The handshake of ExecuteTask (runner.proto): from here on the script may run.
        if (call.task && !call.started) {
          call.started = true;
          this.send({ call_id: message.call_id, start_task: {} });
        }
        return;
      case 'log':
        if (message.log) call.onLog?.(message.log);
        return;
      case 'terminal_output':
        if (message.terminal_output) call.onOutput?.(message.terminal_output.data);
        return;
      case 'failed':
        call.reject(
          new AgentCallError(this.name, message.failed?.code ?? '', message.failed?.message ?? 'the call failed'),
        );
        return;
      case 'task_result':
      case 'metrics':
      case 'exec_result':
      case 'control_result':
      case 'terminal_exit':
      case 'file_result':
        call.resolve(message as AgentMessage__Output & Record<Answer, unknown>);
        return;
    }
  }

  /**
   * Ends the session: every call in flight is rejected, the stream is finished (with `disconnect`
   * first when given), and the owner is told once.
   */
  close(
    reason: string,
    options: { disconnect?: { reason: string; reconnect: boolean }; status?: { code: number } } = {},
  ): void {
    if (this.closed) return;
    if (options.disconnect) this.call.write({ disconnect: options.disconnect });
    this.closed = true;
    this.closeReason = reason;
    for (const call of [...this.pending.values()]) {
      call.reject(
        call.task && call.started
          ? new AgentLostError(this.name, reason)
          : new AgentUnreachableError(this.name, reason),
      );
    }
    try {
      if (options.status) this.call.emit('error', { code: options.status.code, details: reason });
      else this.call.end();
    } catch {
      // The stream may already be gone with its connection; there is nothing left to finish.
    }
    this.onClose(this, reason);
  }
}

function abortReason(options: CallOptions): Error {
  if (options.abortError) return options.abortError();
  const reason = options.signal?.reason;
  return reason instanceof Error ? reason : new Error(`${options.what} was cancelled`);
}
