import { defineLuaModule, luaLazyTable, type LuaFunctionRef } from '@runner/plugin-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ModuleRegistry } from './module-registry.js';
import { fn, recordingLogger } from './test-support.js';
import { WorkerLuaRuntime } from './worker-runtime.js';

const runtimes: WorkerLuaRuntime[] = [];
afterEach(() => {
  for (const r of runtimes.splice(0)) r.close();
});

function setup() {
  const registry = new ModuleRegistry();
  const calls: unknown[] = [];
  registry.provide(
    defineLuaModule({
      name: 'probe',
      description: 'test',
      functions: {
        echo: fn(),
        fail: fn(),
        each: fn(false, true),
        ctx: fn(true),
        keep: fn(false, true),
        adder: fn(),
        wait: fn(false, true),
      },
    }),
    {
      echo: (_call, ...args) => {
        calls.push(args);
        return args[0];
      },
      fail: () => {
        throw new Error('probe failed on purpose');
      },
      each: async (_call, list, f) => {
        const out = [];
        for (const v of list as number[]) out.push(...(await (f as LuaFunctionRef).call(v)));
        return out;
      },
      ctx: (call) => ({ dry: call.dryRun, task: call.run?.task ?? null }),
      // Gives a Lua function back to Lua, which must get the same function.
      keep: (_call, f) => f,
      // A JavaScript function that Lua calls (a call from the worker back to the main thread).
      adder: (_call, n) => ((m: number) => (n as number) + m) as never,
      // Waits until its signal aborts; records why.
      wait: (call) =>
        new Promise((_resolve, reject) => {
          calls.push('waiting');
          call.signal.addEventListener('abort', () => {
            calls.push('aborted');
            reject(new Error('stopped waiting'));
          });
        }),
    },
  );
  const runtime = new WorkerLuaRuntime(registry, { maxWorkers: 2, idleWorkers: 1 });
  runtimes.push(runtime);
  const logger = recordingLogger();
  return { runtime, logger, calls };
}

describe('WorkerLuaRuntime', () => {
  it('passes Lua functions out and back, and JavaScript functions in', async () => {
    const { runtime, logger } = setup();
    const { values } = await runtime.run(
      'local f = function(x) return x + 1 end local g = probe.keep(f) return g == f, g(1), probe.adder(10)(5)',
      { chunkName: '=t', logger },
    );
    expect(values).toEqual([true, 2, 15]);
  });

  it('serves a single run with the worker warmed at setup, starting no spare', async () => {
    const { runtime, logger } = setup();
    runtime.warm();
    expect((await runtime.run('return 1', { chunkName: '=t', logger })).values).toEqual([1]);
    expect(runtime.workers.alive).toBe(1);
    // Sequential runs find the first worker idle again: no spare is started for them.
    for (let i = 2; i < 6; i++)
      expect((await runtime.run(`return ${i}`, { chunkName: '=t', logger })).values).toEqual([i]);
    expect(runtime.workers.alive).toBe(1);
    // Runs side by side start what they need, and a spare once they outnumber the idle ones.
    const side = await Promise.all([1, 2].map((i) => runtime.run(`return ${i}`, { chunkName: '=t', logger })));
    expect(side.map((r) => r.values)).toEqual([[1], [2]]);
    expect(runtime.workers.alive).toBeLessThanOrEqual(2);
  });

  it('reuses an idle worker and replaces one that was ended', async () => {
    const { runtime, logger } = setup();
    const pid = 'return tostring(io.stdout):match("0x%x+") or "x"';
    await runtime.run(pid, { chunkName: '=t', logger });
    expect(runtime.workers.alive).toBeLessThanOrEqual(2);
    // A stuck worker is ended; the pool still serves.
    await expect(
      runtime.run('return string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")', {
        chunkName: '=t',
        logger,
        timeoutMs: 100,
      }),
    ).rejects.toThrow(/timed out after 100 ms \(inside a library call\)/);
    for (let i = 0; i < 5; i++)
      expect((await runtime.run('return 7', { chunkName: '=t', logger })).values).toEqual([7]);
    // Sequential runs reuse: never more than max workers, and the idle ones stay for the next run.
    expect(runtime.workers.alive).toBeLessThanOrEqual(2);
    expect(runtime.workers.idle).toBeGreaterThanOrEqual(1);
  });

  it('cancels: the signal stops the script, aborts its module calls, and a stuck worker is ended', async () => {
    const { runtime, logger, calls } = setup();
    const cancel = new AbortController();
    const waiting = runtime.run('probe.wait()', { chunkName: '=t', logger, signal: cancel.signal });
    await expect.poll(() => calls.includes('waiting')).toBe(true);
    cancel.abort(new Error('run cancelled'));
    await expect(waiting).rejects.toThrow(/stopped: run cancelled/);
    expect(calls).toContain('aborted');
    const stuck = new AbortController();
    const started = performance.now();
    const find = runtime.run('return string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")', {
      chunkName: '=t',
      logger,
      signal: stuck.signal,
    });
    setTimeout(() => stuck.abort(new Error('run cancelled')), 100);
    await expect(find).rejects.toThrow(/stopped: run cancelled/);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('runs a script in a worker and proxies module calls, errors and Lua functions', async () => {
    const { runtime, logger } = setup();
    const { values } = await runtime.run(
      `print("hi") local x = probe.echo({a = 1}) local ok, err = pcall(probe.fail)
       return x.a, err, probe.each({1, 2}, function(v) return v * 10 end), probe.ctx()`,
      {
        chunkName: '=t',
        logger,
        dryRun: true,
        run: { workflow: 'w', runId: 'r', task: 'tk', attempt: 1, agent: 'localhost' },
      },
    );
    expect(values).toEqual([1, 'probe failed on purpose', [10, 20], { dry: true, task: 'tk' }]);
    expect(logger.messages('info')).toEqual(['hi']);
  });

  it('reads lazy tables entry by entry', async () => {
    const { runtime, logger } = setup();
    const tasks = { a: { status: 'ok' }, b: { status: 'failed' } };
    const { values } = await runtime.run(
      `local n = 0 for k in pairs(tasks) do n = n + 1 end return tasks.b.status, n`,
      {
        chunkName: '=t',
        logger,
        globals: { tasks: luaLazyTable(tasks) },
      },
    );
    expect(values).toEqual(['failed', 2]);
  });

  it('fails a task whose script allocates past its limit, and the next run gets a new worker', async () => {
    const { runtime, logger } = setup();
    await expect(
      runtime.run('local t = {} for i = 1, 1e8 do t[i] = i end', {
        chunkName: '=t',
        logger,
        memoryLimitBytes: 64 * 1024 * 1024,
      }),
    ).rejects.toThrow(/memory limit of 64 MiB exceeded/);
    const { values } = await runtime.run('return 1', { chunkName: '=t', logger, memoryLimitBytes: 64 * 1024 * 1024 });
    expect(values).toEqual([1]);
  }, 60_000);

  it("stops a doubling `s = s .. s` at the script's limit, before '..' allocates past it", async () => {
    const { runtime, logger } = setup();
    // One instruction per doubling, which no hook sees: only the check in fengari's concat (built in
    // by fengari-patch.mjs) stops it; without it the string grows outside the heap to gigabytes.
    await expect(
      runtime.run('local s = "x" for i = 1, 40 do s = s .. s end return #s', {
        chunkName: '=t',
        logger,
        memoryLimitBytes: 16 * 1024 * 1024,
      }),
    ).rejects.toThrow("t:1: memory limit of 16 MiB exceeded ('..' would build a string of 32 MiB)");
    // The worker stopped the script itself and is reused.
    expect((await runtime.run('return #("a" .. "b")', { chunkName: '=t', logger })).values).toEqual([2]);
  });

  it('terminates a worker stuck in a library call at its timeout', async () => {
    const { runtime, logger } = setup();
    const started = performance.now();
    await expect(
      runtime.run('return string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")', {
        chunkName: '=t',
        logger,
        timeoutMs: 200,
      }),
    ).rejects.toThrow(/timed out after 200 ms/);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
