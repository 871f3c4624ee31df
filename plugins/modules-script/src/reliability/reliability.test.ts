import { describe, expect, it } from 'vitest';
import { plugin } from '../../index.js';
import { createReliabilityModule } from './reliability.js';
import { luaCallContext, gate, fakeLuaFunction, setUpLuaModules } from '@runner/plugin-sdk/testing';

/** The module with a clock the test moves and waits that are recorded instead of slept. */
function controlled() {
  const clock = { now: 1_000_000 };
  const waits: number[] = [];
  // Loosely typed: the tests read fields of results whose Lua type the signature cannot narrow.
  const module: Record<string, (...args: any[]) => any> = createReliabilityModule({
    now: () => clock.now,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { module, clock, waits };
}

/** Fails `failures` times, then returns `values`; counts its calls and the attempt numbers it got. */
function flaky(failures: number, ...values: any[]) {
  const seen: any[] = [];
  const fn = fakeLuaFunction(async (attempt) => {
    seen.push(attempt);
    if (seen.length <= failures) throw new Error(`boom ${seen.length}`);
    return values;
  });
  return { fn, seen };
}

describe('reliability.retry', () => {
  it('retries until the function succeeds, with exponential waits, and returns its results', async () => {
    const { module, waits } = controlled();
    const { call, lines } = luaCallContext();
    const { fn, seen } = flaky(2, 'ok', 42);
    const result = await module.retry(call, { attempts: 5, delay: '100ms', backoff: 2 }, fn);
    expect(result).toEqual({ kind: 'lua-multiple', values: ['ok', 42] });
    expect(seen).toEqual([1, 2, 3]);
    expect(waits).toEqual([100, 200]);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['warn', 'reliability.retry: attempt 1 of 5 failed: boom 1; retrying in 100ms'],
      ['warn', 'reliability.retry: attempt 2 of 5 failed: boom 2; retrying in 200ms'],
    ]);
  });

  it('caps the wait at max_delay', async () => {
    const { module, waits } = controlled();
    await module.retry(luaCallContext().call, { attempts: 4, delay: 1, backoff: 10, max_delay: '5s' }, flaky(3).fn);
    expect(waits).toEqual([1000, 5000, 5000]);
  });

  it('raises the last error naming the attempt count, using defaults when no options are given', async () => {
    const { module, waits } = controlled();
    const { fn, seen } = flaky(10);
    await expect(module.retry(luaCallContext().call, null, fn)).rejects.toThrow(
      'reliability.retry: failed after 3 attempts: boom 3',
    );
    expect(seen).toHaveLength(3);
    expect(waits).toEqual([1000, 2000]);
    await expect(module.retry(luaCallContext().call, { attempts: 1 }, flaky(10).fn)).rejects.toThrow(
      'reliability.retry: failed after 1 attempt: boom 1',
    );
  });

  it('really waits between attempts, and stops waiting when the task is cancelled', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const reliability = modules.get('reliability')!;
    const started = performance.now();
    await reliability.retry(luaCallContext().call, { attempts: 3, delay: '20ms', backoff: 1 }, flaky(2).fn);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);

    const { call, controller } = luaCallContext();
    const fn = fakeLuaFunction(async () => {
      controller.abort();
      throw new Error('down');
    });
    const t = performance.now();
    await expect(reliability.retry(call, { attempts: 3, delay: '1h' }, fn)).rejects.toThrow(
      'reliability.retry: cancelled after attempt 1 of 3: down',
    );
    // A ceiling far below the hour's delay, not a speed target.
    expect(performance.now() - t).toBeLessThan(30_000);
  });

  it('names bad arguments', async () => {
    const { module } = controlled();
    const call = luaCallContext().call;
    const fn = flaky(0).fn;
    await expect(module.retry(call, { attempts: 0 }, fn)).rejects.toThrow(
      'reliability.retry: option attempts must be a positive integer, got 0',
    );
    await expect(module.retry(call, { backoff: 0.5 }, fn)).rejects.toThrow(
      'reliability.retry: option backoff must be a number of at least 1, got 0.5',
    );
    await expect(module.retry(call, { delay: 'later' }, fn)).rejects.toThrow(
      'reliability.retry: option delay: invalid duration "later"',
    );
    await expect(module.retry(call, { tries: 2 }, fn)).rejects.toThrow(
      'reliability.retry: unknown option "tries" (known: attempts, delay, backoff, max_delay)',
    );
    await expect(module.retry(call, {}, 'fn')).rejects.toThrow(
      'reliability.retry: argument 2 must be a function, got string',
    );
    await expect(module.retry(call, fn)).rejects.toThrow(
      'reliability.retry: argument 1 must be a table of options, got function',
    );
  });
});

describe('reliability.circuit_breaker', () => {
  it('opens after max_failures, fails fast without calling, then lets one trial through', async () => {
    const { module, clock } = controlled();
    const call = luaCallContext().call;
    let calls = 0;
    let healthy = false;
    const fn = fakeLuaFunction(async () => {
      calls++;
      if (!healthy) throw new Error('connection refused');
      return ['paid'];
    });
    const opts = { max_failures: 3, reset_timeout: '10s' };
    for (let i = 0; i < 3; i++) {
      await expect(module.circuit_breaker(call, 'payments', opts, fn)).rejects.toThrow('connection refused');
    }
    expect(module.circuit_state(call, 'payments')).toEqual({ state: 'open', failures: 3, retry_in: 10 });
    await expect(module.circuit_breaker(call, 'payments', opts, fn)).rejects.toThrow(
      'reliability.circuit_breaker: circuit "payments" is open (3 consecutive failures; next trial in 10s)',
    );
    expect(calls).toBe(3);

    clock.now += 10_000;
    expect(module.circuit_state(call, 'payments').state).toBe('half_open');
    // The trial fails: open for another reset_timeout.
    await expect(module.circuit_breaker(call, 'payments', opts, fn)).rejects.toThrow('connection refused');
    expect(calls).toBe(4);
    clock.now += 9_999;
    await expect(module.circuit_breaker(call, 'payments', opts, fn)).rejects.toThrow('circuit "payments" is open');
    expect(calls).toBe(4);

    clock.now += 1;
    healthy = true;
    expect((await module.circuit_breaker(call, 'payments', opts, fn)).values).toEqual(['paid']);
    expect(module.circuit_state(call, 'payments')).toEqual({ state: 'closed', failures: 0 });
  });

  it('counts consecutive failures only: a success resets the count', async () => {
    const { module } = controlled();
    const call = luaCallContext().call;
    const fail = fakeLuaFunction(async () => {
      throw new Error('x');
    });
    const ok = fakeLuaFunction(async () => [true]);
    const opts = { max_failures: 2 };
    await expect(module.circuit_breaker(call, 'api', opts, fail)).rejects.toThrow('x');
    await module.circuit_breaker(call, 'api', opts, ok);
    await expect(module.circuit_breaker(call, 'api', opts, fail)).rejects.toThrow('x');
    expect(module.circuit_state(call, 'api')).toEqual({ state: 'closed', failures: 1 });
    // Names are independent.
    expect(module.circuit_state(call, 'other')).toEqual({ state: 'closed', failures: 0 });
  });

  it('lets only one trial through while half-open', async () => {
    const { module, clock } = controlled();
    const call = luaCallContext().call;
    await expect(
      module.circuit_breaker(
        call,
        'db',
        { max_failures: 1, reset_timeout: 1 },
        fakeLuaFunction(async () => {
          throw new Error('down');
        }),
      ),
    ).rejects.toThrow('down');
    clock.now += 1000;
    const release = gate();
    const trial = module.circuit_breaker(
      call,
      'db',
      { max_failures: 1, reset_timeout: 1 },
      fakeLuaFunction(async () => {
        await release.promise;
        return ['up'];
      }),
    );
    await expect(
      module.circuit_breaker(
        call,
        'db',
        {},
        fakeLuaFunction(async () => ['second']),
      ),
    ).rejects.toThrow('circuit "db" is open (a trial call is running)');
    release.open();
    expect((await trial).values).toEqual(['up']);
    expect(
      (
        await module.circuit_breaker(
          call,
          'db',
          {},
          fakeLuaFunction(async () => ['after']),
        )
      ).values,
    ).toEqual(['after']);
  });

  it('shares breakers across calls of the setUpLuaModules module and raises fn errors unchanged', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const reliability = modules.get('reliability')!;
    const original = new Error('[string "t"]:2: refused');
    const fail = fakeLuaFunction(async () => {
      throw original;
    });
    await expect(reliability.circuit_breaker(luaCallContext().call, 'svc', { max_failures: 1 }, fail)).rejects.toBe(
      original,
    );
    // Another script (another call context) sees the same breaker.
    await expect(reliability.circuit_breaker(luaCallContext().call, 'svc', { max_failures: 1 }, fail)).rejects.toThrow(
      'circuit "svc" is open',
    );
  });

  it('names bad arguments', async () => {
    const { module } = controlled();
    const call = luaCallContext().call;
    const fn = flaky(0).fn;
    await expect(module.circuit_breaker(call, '', {}, fn)).rejects.toThrow(
      "reliability.circuit_breaker: argument 1 must be the circuit's name (a non-empty string), got an empty string",
    );
    await expect(module.circuit_breaker(call, 'x', { max_failures: 1.5 }, fn)).rejects.toThrow(
      'option max_failures must be a positive integer, got 1.5',
    );
    await expect(module.circuit_breaker(call, 'x', {}, null)).rejects.toThrow(
      'reliability.circuit_breaker: argument 3 must be a function, got nil',
    );
  });
});

describe('reliability.timeout', () => {
  it("returns the function's results when it ends in time", async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const result = await modules.get('reliability')!.timeout(
      luaCallContext().call,
      '5s',
      fakeLuaFunction(async () => [1, 'two']),
    );
    expect(result).toEqual({ kind: 'lua-multiple', values: [1, 'two'] });
  });

  it('raises when the limit passes; the function finishes on its own later, its error dropped', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const release = gate();
    let finished = false;
    const fn = fakeLuaFunction(async () => {
      await release.promise;
      finished = true;
      throw new Error('late failure nobody hears');
    });
    const started = performance.now();
    await expect(modules.get('reliability')!.timeout(luaCallContext().call, '50ms', fn)).rejects.toThrow(
      'reliability.timeout: timed out after 50ms',
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(finished).toBe(false);
    release.open();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(finished).toBe(true); // and no unhandled rejection (vitest would fail the run)
  });

  it('raises the function error as it is when it fails in time', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const fn = fakeLuaFunction(async () => {
      throw new Error('bad input');
    });
    await expect(modules.get('reliability')!.timeout(luaCallContext().call, 1, fn)).rejects.toThrow('bad input');
  });

  it('stops at once when the task is cancelled, and names bad arguments', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const reliability = modules.get('reliability')!;
    const { call, controller } = luaCallContext();
    const pending = reliability.timeout(
      call,
      '1h',
      fakeLuaFunction(() => new Promise(() => {})),
    );
    controller.abort();
    await expect(pending).rejects.toThrow('reliability.timeout: cancelled');
    await expect(
      reliability.timeout(
        luaCallContext().call,
        'x',
        fakeLuaFunction(async () => []),
      ),
    ).rejects.toThrow('reliability.timeout: argument 1: invalid duration "x"');
    await expect(reliability.timeout(luaCallContext().call, 1, 'f')).rejects.toThrow(
      'reliability.timeout: argument 2 must be a function, got string',
    );
  });
});
