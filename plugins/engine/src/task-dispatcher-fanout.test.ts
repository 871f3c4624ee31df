import { describe, expect, it } from 'vitest';
import { dispatchTasks, type DispatchableTask, type DispatchLimits } from './task-dispatcher.js';

/** A unit: its task, loop item and agent (none: local). */
interface U {
  name: string;
  item: number;
  agent?: string;
}

interface T extends DispatchableTask {
  items: number;
  agents: string[];
  /** A unit on this agent fails (`local`: a local unit). */
  failOn?: string;
}

const task = (name: string, extra: Partial<T> = {}): T => ({
  name,
  dependsOn: [],
  ignoreErrors: false,
  items: 1,
  agents: [],
  ...extra,
});

/** Dispatches units of 10 ms; records starts, ends, drops and the peaks. */
async function play(tasks: T[], limits: DispatchLimits) {
  const events: string[] = [];
  const dropped: string[] = [];
  let running = 0;
  let delegated = 0;
  let peak = 0;
  let peakDelegated = 0;
  const finished: Record<string, string> = {};
  await dispatchTasks<T, U>(tasks, limits, {
    expand: (t) =>
      Array.from({ length: t.items }, (_, item) =>
        t.agents.length === 0
          ? [{ name: `${t.name}[${item}]`, item }]
          : t.agents.map((agent) => ({ name: `${t.name}[${item}]@${agent}`, item, agent })),
      ).flat(),
    fanOut: (unit) => (unit.agent === undefined ? undefined : String(unit.item)),
    run: async (unit, t) => {
      running++;
      if (unit.agent) delegated++;
      peak = Math.max(peak, running);
      peakDelegated = Math.max(peakDelegated, delegated);
      events.push(`start ${unit.name}`);
      await new Promise((r) => setTimeout(r, 10));
      events.push(`end ${unit.name}`);
      running--;
      if (unit.agent) delegated--;
      return { status: (unit.agent ?? 'local') === t.failOn ? 'failed' : 'succeeded' };
    },
    skipped: () => {},
    dropped: (unit) => void dropped.push(unit.name),
    taskFinished: (t, outcome) => void (finished[t.name] = outcome),
  });
  return { events, dropped, peak, peakDelegated, finished };
}

describe('dispatchTasks: fan-out to agents', () => {
  it('runs one task on all its agents at once under parallel 1', async () => {
    const { events, peak } = await play([task('ship', { agents: ['web-1', 'web-2', 'web-3'] })], {
      parallel: 1,
      forks: 10,
    });
    expect(events.slice(0, 3)).toEqual(['start ship[0]@web-1', 'start ship[0]@web-2', 'start ship[0]@web-3']);
    expect(peak).toBe(3);
  });

  it('keeps loop items one at a time under parallel 1: a fan-out is one slot', async () => {
    const { events } = await play([task('ship', { items: 2, agents: ['a', 'b'] })], { parallel: 1, forks: 10 });
    const lastOfFirst = Math.max(events.indexOf('end ship[0]@a'), events.indexOf('end ship[0]@b'));
    expect(events.indexOf('start ship[1]@a')).toBeGreaterThan(lastOfFirst);
  });

  it('never runs more delegated units than forks, across fan-outs', async () => {
    const agents = ['a', 'b', 'c', 'd', 'e'];
    const { peakDelegated, events } = await play([task('x', { items: 3, agents })], { parallel: 3, forks: 4 });
    expect(peakDelegated).toBe(4);
    expect(events.filter((e) => e.startsWith('start')).length).toBe(15);
  });

  it('does not count local units against forks', async () => {
    const { peak, peakDelegated } = await play([task('local', { items: 3 }), task('remote', { agents: ['a', 'b'] })], {
      parallel: 4,
      forks: 1,
    });
    expect(peakDelegated).toBe(1);
    expect(peak).toBe(4);
  });

  it('drops the units waiting for a fork when the run stops', async () => {
    const { dropped, finished, events } = await play(
      [task('f', { failOn: 'local' }), task('x', { items: 2, agents: ['a', 'b', 'c'] })],
      { parallel: 2, forks: 2 },
    );
    expect(events.slice(0, 3)).toEqual(['start f[0]', 'start x[0]@a', 'start x[0]@b']);
    expect(dropped).toEqual(['x[0]@c', 'x[1]@a', 'x[1]@b', 'x[1]@c']);
    expect(finished).toEqual({ f: 'failed', x: 'succeeded' });
  });
});
