import { errorDetail } from './args.js';
import { formatDuration } from '@runner/plugin-sdk';

/** A signal that fires on the task's cancellation or after `timeoutMs`, and which of the two it was. */
export interface Deadline {
  signal: AbortSignal;
  timedOut(): boolean;
}

export function deadline(callSignal: AbortSignal, timeoutMs: number): Deadline {
  const timeout = AbortSignal.timeout(timeoutMs);
  return { signal: AbortSignal.any([callSignal, timeout]), timedOut: () => timeout.aborted && !callSignal.aborted };
}

/**
 * The error to raise after an operation on `target` failed: says whether the time limit, the task's
 * cancellation or the connection was the cause, and always names the target.
 */
export function failure(
  fn: string,
  target: string,
  error: unknown,
  callSignal: AbortSignal,
  limit: { deadline: Deadline; timeoutMs: number },
): Error {
  if (callSignal.aborted) return cancelled(fn, target, callSignal);
  if (limit.deadline.timedOut()) {
    return new Error(`${fn}: ${target} timed out after ${formatDuration(limit.timeoutMs)}`, { cause: error });
  }
  return new Error(`${fn}: ${target} failed: ${errorDetail(error)}`, { cause: error });
}

export function cancelled(fn: string, target: string, callSignal: AbortSignal): Error {
  const reason = callSignal.reason;
  const why = reason instanceof Error ? reason.message : reason === undefined ? 'aborted' : String(reason);
  return new Error(`${fn}: ${target} was cancelled (${why})`, { cause: reason });
}

/** Settles with `promise`, or rejects as soon as `signal` aborts (for work that cannot itself be stopped). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}
