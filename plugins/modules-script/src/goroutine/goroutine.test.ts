import { beforeAll, describe, expect, it } from 'vitest';
import { plugin } from '../../index.js';
import { luaCallContext, gate, fakeLuaFunction, setUpLuaModules } from '@runner/plugin-sdk/testing';

type Impl = Record<string, (...args: any[]) => any>;
let go: Impl;

beforeAll(async () => {
  const { modules } = await setUpLuaModules([plugin]);
  const impl = modules.get('goroutine')!;
  go = Object.fromEntries(
    Object.entries(impl).map(([k, f]) => [k, (...args: any[]) => f(luaCallContext().call, ...args)]),
  );
});

/** A function that counts how many of its kind run at once, and takes a few event-loop turns. */
function counted(counter: { now: number; max: number }, result: unknown) {
  return fakeLuaFunction(async () => {
    counter.now++;
    counter.max = Math.max(counter.max, counter.now);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    counter.now--;
    return [result as any, 'ignored second value'];
  });
}

describe('goroutine.parallel', () => {
  it('returns first return values in input order, whatever order they finish in', async () => {
    const second = gate();
    const results = await go.parallel([
      fakeLuaFunction(async () => {
        await second.promise; // finishes after task 2
        return ['one'];
      }),
      fakeLuaFunction(async () => {
        second.open();
        return ['two', 'extra'];
      }),
      fakeLuaFunction(() => []),
    ]);
    expect(results).toEqual(['one', 'two', null]);
  });

  it('runs them all at once by default, and never more than max_concurrent when given', async () => {
    const all = { now: 0, max: 0 };
    await go.parallel(Array.from({ length: 6 }, (_, i) => counted(all, i)));
    expect(all.max).toBe(6);
    const limited = { now: 0, max: 0 };
    const results = await go.parallel({
      tasks: Array.from({ length: 7 }, (_, i) => counted(limited, i)),
      max_concurrent: 2,
    });
    expect(limited.max).toBe(2);
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('raises only after every task has ended, naming the one that failed', async () => {
    const slow = gate();
    let slowEnded = false;
    const pending = go.parallel([
      fakeLuaFunction(async () => {
        await slow.promise;
        slowEnded = true;
        return [1];
      }),
      fakeLuaFunction(async () => {
        throw new Error('[string "deploy"]:3: boom');
      }),
    ]);
    let settled = false;
    void pending.catch(() => {}).finally(() => (settled = true));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false); // task 2 failed long ago, task 1 still runs
    slow.open();
    await expect(pending).rejects.toThrow('goroutine.parallel: task 2 failed: [string "deploy"]:3: boom');
    expect(slowEnded).toBe(true);
  });

  it('names every failed task when several fail, and keeps running the rest', async () => {
    const ran: number[] = [];
    const task = (i: number, fail: boolean) =>
      fakeLuaFunction(async () => {
        ran.push(i);
        if (fail) throw new Error(`bad ${i}`);
        return [i];
      });
    await expect(
      go.parallel({ tasks: [task(1, true), task(2, false), task(3, true)], max_concurrent: 1 }),
    ).rejects.toThrow('goroutine.parallel: 2 of 3 tasks failed: task 1 failed: bad 1; task 3 failed: bad 3');
    expect(ran).toEqual([1, 2, 3]);
  });

  it('starts nothing more once the task is cancelled', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const { call, controller } = luaCallContext();
    let started = 0;
    const tasks = Array.from({ length: 4 }, () =>
      fakeLuaFunction(async () => {
        started++;
        controller.abort();
        return [true];
      }),
    );
    await expect(modules.get('goroutine')!.parallel(call, { tasks, max_concurrent: 1 })).rejects.toThrow(
      'goroutine.parallel: 3 of 4 tasks failed: task 2 failed: not started: the task was cancelled',
    );
    expect(started).toBe(1);
  });

  it('accepts an empty list, and names bad arguments', async () => {
    expect(await go.parallel([])).toEqual([]);
    expect(await go.parallel({ tasks: {} })).toEqual([]);
    const f = fakeLuaFunction(() => []);
    await expect(go.parallel('x')).rejects.toThrow(
      'goroutine.parallel: argument 1 must be a list of functions or { tasks = {...}, max_concurrent = n }, got string',
    );
    await expect(go.parallel({ max_concurrent: 2 })).rejects.toThrow('got a table without tasks');
    await expect(go.parallel([f, 'nope'])).rejects.toThrow('goroutine.parallel: task 2 must be a function, got string');
    await expect(go.parallel([f, null])).rejects.toThrow('goroutine.parallel: task 2 must be a function, got nil');
    await expect(go.parallel({ tasks: [f], max_concurrent: 0 })).rejects.toThrow(
      'goroutine.parallel: option max_concurrent must be a positive integer, got 0',
    );
    await expect(go.parallel({ tasks: [f], max: 1 })).rejects.toThrow(
      'goroutine.parallel: unknown option "max" (known: tasks, max_concurrent)',
    );
  });
});

describe('goroutine.spawn and wait', () => {
  it('returns all the results of a spawned function, passing it the extra arguments', async () => {
    const h = go.spawn(
      fakeLuaFunction(async (a, b) => [`${a}-${b}`, 2, null, 'last']),
      'x',
      'y',
    );
    expect(h).toEqual({ id: expect.any(Number) });
    expect(await go.wait(h)).toEqual({ kind: 'lua-multiple', values: ['x-y', 2, null, 'last'] });
    await expect(go.wait(h)).rejects.toThrow(`goroutine.wait: no goroutine ${h.id} (already waited for`);
  });

  it('raises the spawned function error when waited for, and not before', async () => {
    const h = go.spawn(
      fakeLuaFunction(async () => {
        throw new Error('disk full');
      }),
    );
    // Let it fail with nobody waiting: no unhandled rejection may escape (vitest would report it).
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    await expect(go.wait(h)).rejects.toThrow(`goroutine.wait: goroutine ${h.id} failed: disk full`);
  });

  it('gives up waiting after the timeout but the goroutine can be waited for again', async () => {
    const release = gate();
    const h = go.spawn(
      fakeLuaFunction(async () => {
        await release.promise;
        return ['done'];
      }),
    );
    await expect(go.wait(h, '20ms')).rejects.toThrow(`goroutine.wait: goroutine ${h.id} still running after 20ms`);
    release.open();
    expect((await go.wait(h, 5)).values).toEqual(['done']);
  });

  it('stops waiting when the task is cancelled', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const { call, controller } = luaCallContext();
    const impl = modules.get('goroutine')!;
    const h = impl.spawn(
      call,
      fakeLuaFunction(() => new Promise(() => {})),
    );
    const waiting = impl.wait(call, h);
    controller.abort();
    await expect(waiting).rejects.toThrow('goroutine.wait: cancelled');
  });

  it('names bad arguments', async () => {
    expect(() => go.spawn('f')).toThrow('goroutine.spawn: argument 1 must be a function, got string');
    await expect(go.wait('h')).rejects.toThrow(
      'goroutine.wait: argument 1 must be a handle from goroutine.spawn, got string',
    );
    await expect(go.wait({ id: 99999 })).rejects.toThrow('goroutine.wait: no goroutine 99999');
    const h = go.spawn(fakeLuaFunction(() => []));
    await expect(go.wait(h, 'soon')).rejects.toThrow('goroutine.wait: argument 2: invalid duration "soon"');
  });
});

describe('goroutine.sleep', () => {
  it('suspends the caller for the duration, not the others', async () => {
    const started = performance.now();
    let other = 0;
    await Promise.all([
      go.sleep('50ms'),
      (async () => {
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setImmediate(r));
          other++;
        }
      })(),
    ]);
    expect(other).toBe(5);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    await go.sleep(0);
  });

  it('raises at once when the task is cancelled', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const { call, controller } = luaCallContext();
    const started = performance.now();
    const sleeping = modules.get('goroutine')!.sleep(call, '1h');
    controller.abort();
    await expect(sleeping).rejects.toThrow('goroutine.sleep: cancelled');
    // A ceiling far below the hour it would sleep, not a speed target.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('names a bad duration', async () => {
    await expect(go.sleep('forever')).rejects.toThrow('goroutine.sleep: argument 1: invalid duration "forever"');
    await expect(go.sleep(-1)).rejects.toThrow('goroutine.sleep: argument 1 must be a non-negative duration, got -1');
    await expect(go.sleep()).rejects.toThrow('goroutine.sleep: argument 1 must be a duration, got nil');
  });
});
