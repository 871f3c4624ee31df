import { setTimeout as wait } from 'node:timers/promises';

/**
 * Waits `ms` milliseconds, or less if `signal` aborts first (at once if it already has). Never
 * rejects: resolves `true` when the whole time passed and `false` when it was cut short, so a
 * caller decides whether an abort is an error (`if (!(await sleep(ms, signal))) throw ...`).
 * The timer keeps the process alive while it runs, as `setTimeout` does.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await wait(Math.max(0, ms), undefined, signal ? { signal } : undefined);
    return true;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}
