import { setTimeout as sleepFor } from 'node:timers/promises';

/**
 * The scheduler's time: what it reads as now and how it waits. Injected so that tests move time
 * themselves (a DST change, three missed slots) without sleeping through real minutes.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms` of this clock's time, or at once when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The machine's clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleepFor(ms, undefined, { signal }).catch(() => undefined),
};

/**
 * A clock running `rate` times faster than the machine's from `epoch` on (test only:
 * `scheduler.test_clock_rate`): masters given one epoch agree on the time, so real processes
 * go through a minute's slot every few seconds.
 */
export function fastClock(epoch: number, rate: number): Clock {
  return {
    now: () => epoch + (Date.now() - epoch) * rate,
    sleep: (ms, signal) => systemClock.sleep(ms / rate, signal),
  };
}

/** A clock that moves only when told (unit tests). */
export class ManualClock implements Clock {
  private sleepers = new Set<{ until: number; wake: () => void }>();
  constructor(private time: number) {}

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const sleeper = { until: this.time + ms, wake: () => (this.sleepers.delete(sleeper), resolve()) };
      this.sleepers.add(sleeper);
      signal.addEventListener('abort', sleeper.wake, { once: true });
    });
  }

  /** Moves the time to `ms` (never back) and wakes whoever slept until then. */
  set(ms: number): void {
    this.time = Math.max(this.time, ms);
    for (const sleeper of [...this.sleepers]) if (sleeper.until <= this.time) sleeper.wake();
  }
}
