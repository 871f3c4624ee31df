import { ConflictError, defineLuaModule, LuaError, type LuaFunctionRef, type LuaValue } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { ModuleRegistry } from './module-registry.js';
import { fn, testRuntime } from './test-support.js';

describe('the module registry', () => {
  const spec = defineLuaModule({ name: 'greet', description: 'says hello', functions: { hello: fn() } });

  it('lists what was provided', () => {
    const registry = new ModuleRegistry();
    registry.provide(spec, { hello: () => 'hi' });
    expect(registry.list()).toEqual([spec]);
  });

  it('refuses a second module of the same name', () => {
    const registry = new ModuleRegistry();
    registry.provide(spec, { hello: () => 'hi' });
    expect(() => registry.provide(spec, { hello: () => 'hi' })).toThrow(ConflictError);
  });

  it('refuses names that would hide a global of every script', () => {
    const registry = new ModuleRegistry();
    for (const name of ['string', 'print', 'vars', 'tasks']) {
      expect(() => registry.provide(defineLuaModule({ name, description: 'x', functions: {} }), {})).toThrow(
        /is a global of every script/,
      );
    }
  });

  it('refuses an implementation that lacks a declared function or has an undeclared one', () => {
    const registry = new ModuleRegistry();
    expect(() => registry.provide(spec, {} as never)).toThrow('function "hello" is declared but not implemented');
    expect(() => registry.provide(spec, { hello: () => 1, extra: () => 2 } as never)).toThrow(
      'function "extra" is implemented but not declared',
    );
  });

  it('refuses a function whose declaration lacks what placement reads', () => {
    const registry = new ModuleRegistry();
    const { callsLua: _dropped, ...undeclared } = fn();
    const bare = { name: 'bare', description: 'x', functions: { go: undeclared } };
    expect(() => registry.provide(bare as never, { go: () => 1 })).toThrow('function "go" must declare callsLua');
    // defineLuaModule checks the same, and that a function taking a function says it calls it.
    expect(() => defineLuaModule(bare as never)).toThrow('must declare callsLua');
    const taking = { ...fn(), args: [{ name: 'cb', type: 'function' }] };
    expect(() => defineLuaModule({ name: 'cb', description: 'x', functions: { go: taking } })).toThrow(
      'takes a function (argument "cb") but declares callsLua: false',
    );
  });

  it('holds a function declared not to call Lua back to it, at any depth of its arguments', async () => {
    const { registry, run } = testRuntime();
    const liar = defineLuaModule({ name: 'liar', description: 'calls back undeclared', functions: { go: fn() } });
    registry.provide(liar, {
      go: async (_call, opts) => (opts as { nested: { cb: LuaFunctionRef } }).nested.cb.call(),
    });
    await expect(run('return liar.go({ nested = { cb = function() return 1 end } })')).rejects.toThrow(
      'liar.go is declared not to call Lua functions back (callsLua: false), yet called one',
    );
  });

  it('makes a module provided after a run visible to the next run', async () => {
    const { registry, values } = testRuntime();
    expect(await values('return type(greet)')).toEqual(['nil']);
    registry.provide(spec, { hello: () => 'hi' });
    expect(await values('return greet.hello()')).toEqual(['hi']);
  });
});

/** A small goroutine.parallel: calls every function concurrently, returns their first results. */
const par = defineLuaModule({
  name: 'par',
  description: 'runs Lua functions concurrently',
  functions: { parallel: fn(false, true), keep: fn(false, true), wait: fn(false, true) },
});

function parModule(kept: LuaFunctionRef[], log: string[]) {
  const ends = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const endOf = (label: string) => {
    let end = ends.get(label);
    if (!end) {
      let resolve = (): void => {};
      const promise = new Promise<void>((r) => (resolve = r));
      end = { promise, resolve };
      ends.set(label, end);
    }
    return end;
  };
  const ended = (label: string, waiter: string) => {
    let timer: NodeJS.Timeout | undefined;
    const ceiling = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${waiter} waited 10 s for ${label} to end: not concurrent`)), 10_000);
    });
    return Promise.race([endOf(label).promise, ceiling]).finally(() => clearTimeout(timer));
  };
  return [
    par,
    {
      parallel: async (_call: unknown, fns: LuaValue) => {
        const refs = fns as unknown as LuaFunctionRef[];
        const settled = await Promise.allSettled(refs.map((ref, i) => ref.call(i + 1)));
        const failed = settled.findIndex((s) => s.status === 'rejected');
        if (failed >= 0)
          throw new Error(
            `function ${failed + 1} failed: ${(settled[failed] as PromiseRejectedResult).reason.message}`,
          );
        return settled.map((s) => (s as PromiseFulfilledResult<LuaValue[]>).value[0]);
      },
      keep: (_call: unknown, ref: LuaValue) => {
        kept.push(ref as unknown as LuaFunctionRef);
      },
      // Starts `label` and ends it once `after` has ended (or at once without one): the order of
      // the log is then decided by promises, never by how long a timer took on a busy machine.
      // Functions run one after another would wait for `after` forever: the ceiling says so.
      wait: (_call: unknown, label: LuaValue, after: LuaValue) => {
        log.push(`start ${String(label)}`);
        const waited = after === undefined ? Promise.resolve() : ended(String(after), String(label));
        return waited.then(() => {
          log.push(`end ${String(label)}`);
          endOf(String(label)).resolve();
        });
      },
    },
  ] as const;
}

describe('Lua functions called from JavaScript', () => {
  it('run concurrently, each in a coroutine of its own, and give their results in order', async () => {
    const log: string[] = [];
    const { values } = testRuntime({ modules: [parModule([], log)] });
    const result = await values(`
      local shared = 0
      return par.parallel({
        function(i) par.wait("a", "b") shared = shared + 1 return "a" .. i end,
        function(i) par.wait("b") shared = shared + 1 return "b" .. i end,
        function(i) return "c" .. i end,
      }), shared
    `);
    expect(result).toEqual([['a1', 'b2', 'c3'], 2]);
    // Concurrent: a waits for b to end, so b must start while a is still waiting (one after the
    // other, a would wait out its ceiling and fail the run).
    expect(log).toEqual(['start a', 'start b', 'end b', 'end a']);
  });

  it('report an error of one function to the caller, which may catch it', async () => {
    const { values } = testRuntime({ modules: [parModule([], [])] });
    expect(
      await values(`
        return pcall(par.parallel, { function() return 1 end, function() error("bad input") end })
      `),
    ).toEqual([false, 'function 2 failed: [string "test"]:2: bad input']);
  });

  it('stop with their script: a call after the run ended is rejected', async () => {
    const kept: LuaFunctionRef[] = [];
    const { run } = testRuntime({ modules: [parModule(kept, [])] });
    await run('par.keep(function() return 1 end)');
    await expect(kept[0].call()).rejects.toThrow(LuaError);
    await expect(kept[0].call()).rejects.toThrow('the script this Lua function belongs to has ended');
  });

  it('share the script timeout', async () => {
    const { run } = testRuntime({ modules: [parModule([], [])] });
    await expect(run('par.parallel({ function() while true do end end })', { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'timeout',
    });
  });
});
