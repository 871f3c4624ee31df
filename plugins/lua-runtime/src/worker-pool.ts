import { pluginWorkerEntry } from '@runner/plugin-sdk';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerData } from './worker-protocol.js';

export interface WorkerPoolOptions {
  /** Workers alive at most (busy and idle); a run past that waits for one. */
  max: number;
  /** Idle workers kept for reuse; more are ended as their runs finish. */
  idle: number;
  sliceMs?: number;
  hookInstructions?: number;
}

/** Heap beyond the script's limit: the worker's own code, fengari, a Lua state. */
const BASE_HEAP_MB = 48;

/**
 * One Lua worker thread. It runs one script at a time: a worker that must be ended (out of memory,
 * stuck in a library call past its timeout) then takes no other script with it.
 */
export class LuaWorker {
  readonly worker: Worker;
  readonly memoryLimitBytes: number;
  /** Resolves once the worker has loaded. */
  readonly ready: Promise<void>;
  /** Where the worker's lazy-table answers go, with the flag it waits on. */
  readonly lazyPort: MessagePort;
  readonly lazyFlag: Int32Array;
  /** Set once the worker has exited, with why. */
  exit: Error | null = null;
  /** The version of the module list the worker has installed (sent with a run when it changed). */
  modulesVersion = -1;
  /** The `env` object last sent: the next run with the same one does not send it again. */
  lastEnv: object | undefined = undefined;
  onMessage: (message: FromWorker) => void = () => {};
  /** The pool's: drops a worker that died idle. */
  onExit: (error: Error) => void = () => {};
  /** The run's that holds the worker: reports why its script ended. */
  onRunExit: (error: Error) => void = () => {};

  constructor(entry: string, memoryLimitBytes: number, options: WorkerPoolOptions) {
    this.memoryLimitBytes = memoryLimitBytes;
    const channel = new MessageChannel();
    const lazySignal = new SharedArrayBuffer(4);
    this.lazyFlag = new Int32Array(lazySignal);
    this.lazyPort = channel.port1;
    const data: WorkerData = {
      lazySignal,
      lazyPort: channel.port2,
      memoryLimitBytes,
      sliceMs: options.sliceMs,
      hookInstructions: options.hookInstructions,
    };
    const limitMb = Math.ceil(memoryLimitBytes / 1024 / 1024);
    this.worker = new Worker(entry, {
      workerData: data,
      transferList: [channel.port2],
      // The script's limit plus the worker's own needs; the heap guard (heap-guard.ts) stops the
      // script at its limit first, V8's limit is the backstop for what the guard cannot see in time.
      resourceLimits: { maxOldGenerationSizeMb: limitMb + BASE_HEAP_MB, maxYoungGenerationSizeMb: 16 },
      // The worker inherits no stdin: a script's io.read reads the run's stdin, passed with the run.
      stdin: false,
    });
    this.worker.unref();
    let readyResolve!: () => void;
    let readyReject!: (error: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    this.ready.catch(() => {});
    this.worker.on('message', (message: FromWorker) => {
      if (message.type === 'ready') readyResolve();
      else this.onMessage(message);
    });
    const exited = (error: Error): void => {
      if (this.exit !== null) return;
      this.exit = error;
      this.lazyPort.close();
      readyReject(error);
      this.onExit(error);
      this.onRunExit(error);
    };
    this.worker.on('error', (error) => exited(error));
    this.worker.on('exit', (code) => exited(new Error(`the Lua worker exited with code ${code}`)));
  }

  post(message: ToWorker): void {
    if (this.exit === null) this.worker.postMessage(message);
  }

  /** Answers a request the worker is blocked on (a lazy-table read, a module call). */
  answerSync(value: unknown): void {
    this.lazyPort.postMessage(value);
    Atomics.store(this.lazyFlag, 0, 1);
    Atomics.notify(this.lazyFlag, 0);
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** A worker of the pool, possibly still starting. */
interface Slot {
  limit: number;
  worker: LuaWorker | null;
  ready: Promise<LuaWorker>;
}

/**
 * The pool of Lua workers: a run takes an idle worker with its memory limit (resourceLimits are
 * fixed when a worker starts) or starts one, and the pool starts spares in the background so that
 * `idle` of them are ready for the next runs. A worker that died is not reused. Runs beyond `max`
 * wait in order.
 */
export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #idle: Slot[] = [];
  /** Runs served so far: the first starts no spare. */
  #acquired = 0;
  readonly #busy = new Set<Slot>();
  readonly #waiting: { limit: number; resolve(worker: LuaWorker): void; reject(error: Error): void }[] = [];
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#idle.length + this.#busy.size;
  }

  get idleCount(): number {
    return this.#idle.length;
  }

  async acquire(memoryLimitBytes: number): Promise<LuaWorker> {
    if (this.#closed) throw new Error('the Lua worker pool is closed');
    const at = this.#idle.findIndex((s) => s.limit === memoryLimitBytes && s.worker?.exit == null);
    let slot: Slot;
    if (at >= 0) {
      slot = this.#idle.splice(at, 1)[0];
    } else {
      // An idle worker of another limit gives its place to one of this limit.
      if (this.size >= this.#options.max && this.#idle.length > 0) this.#end(this.#idle.shift()!);
      if (this.size >= this.#options.max) {
        return new Promise((resolve, reject) => this.#waiting.push({ limit: memoryLimitBytes, resolve, reject }));
      }
      slot = this.#spawn(memoryLimitBytes);
    }
    this.#busy.add(slot);
    // Only when this run found no idle worker, and not at the first run: runs side by side then
    // outnumber the idle workers, and the next one finds a spare started. Sequential runs (a
    // `parallel: 1` workflow, a one-task `runner run`) always find the last run's worker idle again:
    // a spare would cost a worker's start (~70 ms of CPU, on a core the run competes for) and
    // never run anything.
    if (this.#acquired++ > 0 && at < 0) this.#topUp(memoryLimitBytes);
    try {
      return await slot.ready;
    } catch (error) {
      this.#busy.delete(slot);
      // A spare that failed to start (or died idle) is replaced once; a new one failing is the answer.
      if (at >= 0) return this.acquire(memoryLimitBytes);
      throw error;
    }
  }

  /** Gives a worker back after its run; `healthy` false ends it (terminated, or in doubt). */
  release(worker: LuaWorker, healthy: boolean): void {
    const slot = [...this.#busy].find((s) => s.worker === worker);
    if (slot === undefined) return;
    this.#busy.delete(slot);
    worker.onMessage = () => {};
    worker.onRunExit = () => {};
    if (!healthy || worker.exit !== null || this.#closed) {
      this.#end(slot);
    } else {
      const next = this.#waiting.findIndex((w) => w.limit === slot.limit);
      if (next >= 0) {
        const [waiter] = this.#waiting.splice(next, 1);
        this.#busy.add(slot);
        waiter.resolve(worker);
        return;
      }
      // Warm workers first: acquire takes from the front.
      if (this.#idle.length < this.#options.idle) this.#idle.unshift(slot);
      else this.#end(slot);
    }
    this.#serveWaiting();
  }

  /** Ends the idle workers. */
  drainIdle(): void {
    for (const slot of this.#idle.splice(0)) this.#end(slot);
  }

  close(): void {
    this.#closed = true;
    this.drainIdle();
    for (const slot of this.#busy) this.#end(slot);
    for (const waiter of this.#waiting.splice(0)) waiter.reject(new Error('the Lua worker pool is closed'));
  }

  /**
   * Starts one spare when none of this limit is idle: the next run then finds one started. One, not
   * `idle`: workers that finish their runs fill the idle list, and spares beyond them would only be
   * started to be ended (a start costs tens of milliseconds of CPU).
   */
  #topUp(limit: number): void {
    if (this.#closed || this.#options.idle === 0 || this.size >= this.#options.max) return;
    if (!this.#idle.some((s) => s.limit === limit)) this.#idle.push(this.#spawn(limit));
  }

  /** Starts a spare ahead of the first run (the first run would otherwise wait for a start). */
  warm(limit: number): void {
    this.#topUp(limit);
  }

  #end(slot: Slot): void {
    slot.ready.then((worker) => worker.terminate()).catch(() => {});
  }

  #serveWaiting(): void {
    while (this.#waiting.length > 0 && this.size < this.#options.max) {
      const waiter = this.#waiting.shift()!;
      const slot = this.#spawn(waiter.limit);
      this.#busy.add(slot);
      slot.ready.then(waiter.resolve, (error: Error) => {
        this.#busy.delete(slot);
        waiter.reject(error);
      });
    }
  }

  #spawn(limit: number): Slot {
    const slot: Slot = { limit, worker: null, ready: null as unknown as Promise<LuaWorker> };
    slot.ready = (async () => {
      entry ??= workerEntry();
      const worker = new LuaWorker(await entry, limit, this.#options);
      slot.worker = worker;
      // Died while idle: drop it; while busy, the run that holds it reports and releases it.
      worker.onExit = () => {
        const at = this.#idle.indexOf(slot);
        if (at >= 0) this.#idle.splice(at, 1);
      };
      if (this.#closed) void worker.terminate();
      await worker.ready;
      return worker;
    })();
    slot.ready.catch(() => {
      const at = this.#idle.indexOf(slot);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    return slot;
  }
}

/** Found once per process. */
let entry: Promise<string> | null = null;

/** The worker's entry file: dist/src/worker-entry.js, built with fengari's patch (build.mjs). */
function workerEntry(): Promise<string> {
  return pluginWorkerEntry({
    moduleUrl: import.meta.url,
    packageName: '@runner/plugin-lua-runtime',
    entry: 'worker-entry',
  });
}
