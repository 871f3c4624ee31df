import type { HeapGuard } from './heap-guard.js';

/** Something the time slicer can resume: one Lua coroutine of a script. */
export interface Resumable {
  /** Resumes the coroutine until it yields, returns or fails. */
  step(): void;
}

/**
 * Shares the one JavaScript thread between Lua scripts and everything else in the process.
 *
 * All Lua code that runs in one turn of the event loop draws on one time slice (`sliceMs`). Every
 * script's count hook asks `expired()`; once the slice is spent the script yields, and `drain`
 * resumes it from `setImmediate`, after Node has run its timers and I/O. Ready scripts are resumed
 * in turn (round robin), so one spinning script cannot starve another either.
 */
export class TimeSlicer {
  readonly sliceMs: number;
  /** Checked by scripts that use up their slice (see heap-guard.ts). */
  readonly heapGuard: HeapGuard | null;
  #sliceStart = -1;
  #resetPending = false;
  #drainPending = false;
  readonly #ready: Resumable[] = [];

  constructor(sliceMs: number, heapGuard: HeapGuard | null = null) {
    this.sliceMs = sliceMs;
    this.heapGuard = heapGuard;
  }

  /** Starts the turn's slice if none runs; Lua code runs only inside a slice. */
  beginSlice(): void {
    if (this.#sliceStart >= 0) return;
    this.#sliceStart = performance.now();
    this.#scheduleReset();
  }

  expired(now = performance.now()): boolean {
    return this.#sliceStart >= 0 && now - this.#sliceStart >= this.sliceMs;
  }

  /**
   * A coroutine can continue (its promise settled): resume it now if the slice has time left,
   * which keeps an await of an already-resolved promise cheap, else queue it for the next turn.
   */
  wake(task: Resumable): void {
    if (this.expired()) this.enqueue(task);
    else task.step();
  }

  enqueue(task: Resumable): void {
    this.#ready.push(task);
    if (this.#drainPending) return;
    this.#drainPending = true;
    setImmediate(this.#drain);
  }

  /** Coroutines waiting for their next slice. */
  get queued(): number {
    return this.#ready.length;
  }

  readonly #drain = (): void => {
    this.#drainPending = false;
    this.#sliceStart = performance.now();
    this.#scheduleReset();
    // Only the coroutines queued now: one that yields again goes behind the others, next turn.
    // The first always runs, so that even a tiny slice makes progress.
    let n = this.#ready.length;
    do this.#ready.shift()!.step();
    while (--n > 0 && !this.expired());
    if (this.#ready.length > 0 && !this.#drainPending) {
      this.#drainPending = true;
      setImmediate(this.#drain);
    }
  };

  #scheduleReset(): void {
    if (this.#resetPending) return;
    this.#resetPending = true;
    setImmediate(this.#reset);
  }

  readonly #reset = (): void => {
    this.#resetPending = false;
    this.#sliceStart = -1;
  };
}
