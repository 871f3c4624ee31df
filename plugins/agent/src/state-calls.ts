import { formatDuration, RunnerError, type LuaValue, type StateAnswer, type StateForwarder } from '@runner/plugin-sdk';
import type { AgentMessage, MasterMessage__Output } from '@runner/proto';

export interface StateCallsOptions {
  /** `host:port` of the master, for messages. */
  master: string;
  /** Writes on the current session; false when there is none (not registered). */
  send(message: AgentMessage): boolean;
  /** How long a call waits for the master's answer (agent.state_timeout). */
  timeoutMs: number;
}

interface Pending {
  fn: string;
  resolve(answer: StateAnswer): void;
  reject(error: Error): void;
}

/**
 * `state.*` of delegated tasks, asked of the master over the agent's stream (runner.proto,
 * StateRequest): each call has an id the master's `state_result` repeats, a deadline, and fails
 * at once when the connection to the master ends, so a script never waits on a master that is gone.
 */
export class StateCalls implements StateForwarder {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly options: StateCallsOptions) {}

  get inFlight(): number {
    return this.pending.size;
  }

  forward(
    request: Parameters<StateForwarder['forward']>[0],
    run: { runId: string; task: string },
    signal?: AbortSignal,
  ): Promise<StateAnswer> {
    const fn = `state.${request.operation}`;
    const { master, timeoutMs } = this.options;
    if (signal?.aborted) return Promise.reject(abortError(signal, fn));
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffffffff ? 1 : this.nextId + 1;
    return new Promise<StateAnswer>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      const onAbort = () => {
        settle();
        reject(abortError(signal as AbortSignal, fn));
      };
      const timer = setTimeout(() => {
        settle();
        reject(
          new RunnerError(
            'master_timeout',
            `${fn}: no answer from the master ${master} within ${formatDuration(timeoutMs)} (agent.state_timeout); whether it took effect there is unknown`,
            { status: 504 },
          ),
        );
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        fn,
        resolve: (answer) => {
          settle();
          resolve(answer);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      const value = request.value;
      const sent = this.options.send({
        call_id: id,
        state: {
          run_id: run.runId,
          task: run.task,
          operation: request.operation,
          scope: request.scope,
          key: request.key,
          value_json: value === null || value === undefined ? '' : JSON.stringify(value),
        },
      });
      if (!sent) {
        this.pending
          .get(id)
          ?.reject(
            new RunnerError(
              'master_unreachable',
              `${fn}: not connected to the master ${master}, which keeps the state; nothing was stored`,
              { status: 503 },
            ),
          );
      }
    });
  }

  /** The master's answer to one of the calls (`state_result`); a late one (after its deadline) is dropped. */
  deliver(message: MasterMessage__Output): void {
    const call = this.pending.get(message.call_id);
    const result = message.state_result;
    if (!call || !result) return;
    if (result.failed) {
      call.reject(new RunnerError(result.failed.code || 'state_failed', result.failed.message, { status: 502 }));
      return;
    }
    call.resolve({
      value: result.value_json ? (JSON.parse(result.value_json) as LuaValue) : null,
      keys: result.keys,
      changed: result.changed,
    });
  }

  /** The session ended: every call in flight fails now, saying so. */
  connectionEnded(reason: string): void {
    for (const call of [...this.pending.values()]) {
      call.reject(
        new RunnerError(
          'master_lost',
          `${call.fn}: the connection to the master ${this.options.master} ended before it answered (${reason}); whether it took effect there is unknown`,
          { status: 503 },
        ),
      );
    }
  }
}

function abortError(signal: AbortSignal, fn: string): Error {
  const reason = signal.reason as unknown;
  return reason instanceof Error ? reason : new Error(`${fn} was cancelled`);
}
