import { describe, expect, it } from 'vitest';
import { dispatchTasks, type DispatchableTask, type UnitResult } from './task-dispatcher.js';

interface T extends DispatchableTask {
  units?: number;
  result?: UnitResult['status'];
  expandError?: string;
}

const task = (name: string, extra: Partial<T> = {}): T => ({ name, dependsOn: [], ignoreErrors: false, ...extra });

/** Dispatches units that take a few milliseconds, recording what happened. */
async function play(tasks: T[], parallel: number, signal?: AbortSignal) {
  const events: string[] = [];
  const skipped: Record<string, string> = {};
  const finished: Record<string, string> = {};
  const expandFailed: Record<string, string> = {};
  const dropped: string[] = [];
  let running = 0;
  let peak = 0;
  const result = await dispatchTasks<T, string>(
    tasks,
    parallel,
    {
      expand: (t) => {
        if (t.expandError) throw new Error(t.expandError);
        return Array.from({ length: t.units ?? 1 }, (_, i) => (t.units ? `${t.name}[${i}]` : t.name));
      },
      run: async (unit, t) => {
        running++;
        peak = Math.max(peak, running);
        events.push(`start ${unit}`);
        await new Promise((r) => setTimeout(r, t.result === 'failed' ? 1 : 5));
        events.push(`end ${unit}`);
        running--;
        return { status: t.result ?? 'succeeded', message: t.result === 'failed' ? `${unit} broke` : undefined };
      },
      skipped: (t, reason) => void (skipped[t.name] = reason),
      taskFinished: (t, outcome) => void (finished[t.name] = outcome),
      expandFailed: (t, message) => void (expandFailed[t.name] = message),
      dropped: (unit, _t, reason) => void dropped.push(`${unit}: ${reason}`),
    },
    signal,
  );
  return { events, skipped, finished, peak, result, expandFailed, dropped };
}

describe('dispatchTasks', () => {
  it('runs one unit at a time in file order with parallel 1', async () => {
    const { events, peak } = await play([task('a'), task('b'), task('c', { dependsOn: ['a'] })], 1);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(peak).toBe(1);
  });

  it('overlaps independent tasks and loop units up to the parallel limit, never more', async () => {
    const { events, peak } = await play([task('a', { units: 4 }), task('b'), task('c', { dependsOn: ['a'] })], 3);
    expect(peak).toBe(3);
    // c waits for every unit of a.
    const lastOfA = Math.max(...[0, 1, 2, 3].map((i) => events.indexOf(`end a[${i}]`)));
    expect(events.indexOf('start c')).toBeGreaterThan(lastOfA);
  });

  it('stops after a failure: dependents and the rest are skipped with the reason', async () => {
    const { finished, skipped, result, events } = await play(
      [task('a', { result: 'failed' }), task('b', { dependsOn: ['a'] }), task('c'), task('d', { dependsOn: ['b'] })],
      1,
    );
    expect(finished).toEqual({ a: 'failed' });
    expect(skipped).toEqual({
      b: 'not run: it depends on a, which failed',
      c: 'not run: the run stopped after a failed',
      d: 'not run: it depends on b, which was not run',
    });
    expect(result.stoppedBy).toBe('a');
    expect(events).toEqual(['start a', 'end a']);
  });

  it('lets units already running finish when another fails', async () => {
    const { events, finished } = await play([task('a', { result: 'failed' }), task('b'), task('c')], 2);
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
    expect(events).toContain('end b');
    expect(events).not.toContain('start c');
    expect(finished).toEqual({ a: 'failed', b: 'succeeded' });
  });

  it('continues past a failure with ignore_errors and reports it ignored', async () => {
    const { finished, skipped } = await play(
      [task('a', { result: 'failed', ignoreErrors: true }), task('b', { dependsOn: ['a'] })],
      1,
    );
    expect(finished).toEqual({ a: 'ignored', b: 'succeeded' });
    expect(skipped).toEqual({});
  });

  it('runs the dependents of a task skipped by its own condition', async () => {
    const { finished } = await play([task('a', { result: 'skipped' }), task('b', { dependsOn: ['a'] })], 1);
    expect(finished).toEqual({ a: 'skipped', b: 'succeeded' });
  });

  it('fails a task whose expansion throws, with the message; a dependent names it', async () => {
    const { finished, skipped, expandFailed } = await play(
      [task('a', { expandError: 'loop did not render to a list' }), task('b'), task('c', { dependsOn: ['a'] })],
      1,
    );
    expect(finished).toEqual({ a: 'failed' });
    expect(expandFailed).toEqual({ a: 'loop did not render to a list' });
    expect(skipped).toEqual({
      b: 'not run: the run stopped after a failed',
      c: 'not run: it depends on a, which failed',
    });
  });

  it('reports the loop units a stop dropped, one by one', async () => {
    const { dropped, events } = await play([task('a', { result: 'failed' }), task('b', { units: 4 })], 2);
    expect(events.slice(0, 2)).toEqual(['start a', 'start b[0]']);
    expect(events).not.toContain('start b[1]');
    expect(dropped).toEqual(['b[1]', 'b[2]', 'b[3]'].map((u) => `${u}: not run: the run stopped after a failed`));
  });

  it('skips what has not started once the run is cancelled', async () => {
    const controller = new AbortController();
    const pending = play([task('a'), task('b'), task('c')], 1, controller.signal);
    setTimeout(() => controller.abort(), 2);
    const { finished, skipped } = await pending;
    expect(finished).toEqual({ a: 'succeeded' });
    expect(skipped).toEqual({ b: 'not run: the run was cancelled', c: 'not run: the run was cancelled' });
  });
});
