/**
 * Template workers: where templates whose cost is not bounded (bounded.ts) render, so that a loop
 * or filter bomb costs a worker, not the caller's event loop. A worker is a child process, not a
 * thread: V8 ends the whole process when a heap overshoots its limit by a large allocation and
 * then grows again (a thread's resourceLimits end the master itself then: measured with a
 * 240 MB `split` and a loop after it). Each worker renders one template at a time; one that must
 * be stopped (timeout, abort) is killed and replaced, one past its heap limit dies by V8's hand.
 * Idle workers are kept per heap limit for the next ones.
 */
import { fork, type ChildProcess } from 'node:child_process';
import {
  pluginWorkerEntry,
  RunnerError,
  TemplateError,
  type TemplateContext,
  type TemplateErrorKind,
  type TemplateSyntax,
} from '@runner/plugin-sdk';

export interface RenderJob {
  id: number;
  source: string;
  context: TemplateContext;
  syntax: TemplateSyntax;
  name?: string;
}

export type RenderReply =
  | { id: number; text: string; error?: undefined }
  | {
      id: number;
      text?: undefined;
      error: {
        kind: TemplateErrorKind;
        reason: string;
        line: number;
        column: number;
        name?: string;
        variable?: string;
      };
    };

export interface RenderPoolOptions {
  /** Workers rendering at once at most; more renderings wait in order (their timeout runs). */
  max?: number;
  /** Idle workers kept per heap limit (default `max`: starting one costs a process start). */
  idle?: number;
}

export interface PoolRenderOptions {
  name?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  memoryLimitBytes: number;
}

/** Heap beyond the rendering's limit: nunjucks, the worker's own code, the context's copy. */
type Worker = ChildProcess;
const BASE_HEAP_MB = 32;

/** A worker of the pool for one heap limit; `ready` once it has loaded. */
interface RenderWorker {
  limitMb: number;
  ready: Promise<Worker>;
}

/** Ends a worker, also one still loading (once it has). */
function terminate(holder: RenderWorker): void {
  holder.ready.then(
    (worker) => void worker.kill('SIGKILL'),
    () => {},
  );
}

export class RenderPool {
  readonly #max: number;
  readonly #idleMax: number;
  readonly #idle = new Map<number, RenderWorker[]>();
  #busy = 0;
  readonly #waiting: (() => void)[] = [];
  #entry: Promise<string> | undefined;
  #nextId = 1;

  constructor(options: RenderPoolOptions = {}) {
    this.#max = Math.max(1, options.max ?? 4);
    this.#idleMax = Math.max(0, options.idle ?? this.#max);
  }

  async render(job: Omit<RenderJob, 'id'>, options: PoolRenderOptions): Promise<string> {
    const what = options.name ?? 'template';
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    const stopped = stopSignal(what, options);
    try {
      await Promise.race([this.#slot(), stopped.promise]);
    } catch (error) {
      stopped.clear();
      throw error;
    }
    this.#busy++;
    const limitMb = Math.ceil(options.memoryLimitBytes / 1024 / 1024);
    const worker = this.#idle.get(limitMb)?.pop() ?? this.#start(limitMb);
    let healthy = false;
    try {
      const loaded = await Promise.race([worker.ready, stopped.promise]);
      const text = await Promise.race([
        this.#send(loaded, worker.limitMb, { ...job, id: this.#nextId++ }, what),
        stopped.promise,
      ]);
      healthy = true;
      return text;
    } catch (error) {
      // A TemplateError came from a worker that is fine; anything else left it stopped or dead.
      healthy = error instanceof TemplateError;
      throw deadline !== undefined && Date.now() >= deadline && !healthy ? stopped.timeout() : error;
    } finally {
      stopped.clear();
      this.#busy--;
      if (healthy) this.#release(worker);
      else terminate(worker);
      this.#waiting.shift()?.();
    }
  }

  /** Ends every idle worker (busy ones end with their rendering). */
  close(): Promise<void> {
    const idle = [...this.#idle.values()].flat();
    this.#idle.clear();
    for (const holder of idle) terminate(holder);
    return Promise.resolve();
  }

  #slot(): Promise<void> {
    if (this.#busy < this.#max) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #start(limitMb: number): RenderWorker {
    this.#entry ??= pluginWorkerEntry({
      moduleUrl: import.meta.url,
      packageName: '@runner/plugin-template',
      entry: 'render-worker',
    });
    const ready = this.#entry.then(
      (file) =>
        new Promise<Worker>((resolve, reject) => {
          const worker = fork(file, [], {
            execArgv: [`--max-old-space-size=${limitMb + BASE_HEAP_MB}`, '--max-semi-space-size=8'],
            // Templates read their context, never the environment: the master's is not passed.
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
            // V8's out-of-memory report goes to stderr; what counts is the exit.
            stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
            serialization: 'advanced',
          });
          worker.unref();
          worker.channel?.unref();
          worker.once('message', () => resolve(worker));
          worker.once('error', reject);
          worker.once('exit', (code, signal) =>
            reject(new Error(`the template worker exited ${signal ? `by ${signal}` : `with code ${code}`}`)),
          );
        }),
    );
    ready.catch(() => {});
    return { limitMb, ready };
  }

  #send(worker: Worker, limitMb: number, job: RenderJob, what: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        worker.channel?.unref();
      };
      const onMessage = (reply: RenderReply) => {
        if (reply.id !== job.id) return;
        cleanup();
        if (reply.error === undefined) return resolve(reply.text);
        const { kind, reason, line, column, name, variable } = reply.error;
        reject(new TemplateError(kind, reason, { line, column }, { name, variable, syntax: job.syntax }));
      };
      const onError = (error: Error & { code?: string }) => {
        cleanup();
        reject(
          error.code === 'out_of_memory'
            ? new RunnerError(
                'memory_limit',
                `${what}: rendering used more than ${limitMb} MiB (the task's memory limit) and was stopped`,
                { status: 422 },
              )
            : new RunnerError('template_render_error', `${what}: the template worker failed: ${error.message}`, {
                status: 500,
              }),
        );
      };
      // V8 aborts a process past its heap limit (SIGABRT, or exit code 134 through a shell).
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        onError(
          signal === 'SIGABRT' || code === 134
            ? Object.assign(new Error('out of memory'), { code: 'out_of_memory' })
            : new Error(`it exited ${signal ? `by ${signal}` : `with code ${code}`}`),
        );
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      // Busy, the channel keeps this process alive as a pending rendering would.
      worker.channel?.ref();
      try {
        worker.send(job);
      } catch (error) {
        cleanup();
        reject(
          new RunnerError(
            'template_render_error',
            `${what}: its context cannot be sent to a template worker: ${(error as Error).message}`,
            { status: 400 },
          ),
        );
      }
    });
  }

  #release(worker: RenderWorker): void {
    const idle = this.#idle.get(worker.limitMb) ?? [];
    if (idle.length >= this.#idleMax) return terminate(worker);
    idle.push(worker);
    this.#idle.set(worker.limitMb, idle);
  }
}

/** A promise that rejects at the rendering's timeout or when its signal aborts. */
function stopSignal(
  what: string,
  options: PoolRenderOptions,
): { promise: Promise<never>; clear(): void; timeout(): RunnerError } {
  const timeout = () =>
    new RunnerError('timeout', `${what}: rendering timed out after ${options.timeoutMs} ms (the task's timeout)`, {
      status: 504,
    });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const promise = new Promise<never>((_, reject) => {
    if (options.timeoutMs !== undefined) timer = setTimeout(() => reject(timeout()), Math.max(0, options.timeoutMs));
    const { signal } = options;
    if (signal) {
      onAbort = () =>
        reject(signal.reason instanceof Error ? signal.reason : new RunnerError('cancelled', 'cancelled'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  promise.catch(() => {});
  return {
    promise,
    timeout,
    clear() {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener('abort', onAbort);
    },
  };
}
