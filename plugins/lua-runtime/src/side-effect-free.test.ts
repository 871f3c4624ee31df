// LuaRuntime.sideEffectFree: what a master may run in its own process (the rest goes through its
// local executor, as engine.run_as). On the real compiler and a real state's globals, with a
// module that reads files declared as a real one would be.
import { afterAll, describe, expect, it } from 'vitest';
import type { LuaValue } from '@runner/plugin-sdk';
import { AutoLuaRuntime } from './auto-runtime.js';
import { ModuleRegistry } from './module-registry.js';
import { LuaRuntimeService } from './runtime.js';
import { leavesNoTrace } from './script-bounds.js';

const registry = new ModuleRegistry();
registry.provide(
  {
    name: 'file',
    description: 'test',
    functions: {
      // Read-only, so not a side effect for dry-run; still a way to the master's files.
      read: {
        args: [{ name: 'path', type: 'string' }],
        result: 'string',
        description: 'reads',
        sideEffects: false,
        callsLua: false,
      },
    },
  },
  { read: () => 'content' },
);
const inline = new LuaRuntimeService(registry);
const auto = new AutoLuaRuntime(registry, { maxWorkers: 1, idleWorkers: 0 });
afterAll(() => {
  inline.close();
  auto.close();
});

const PURE: [string, string][] = [
  ['the throughput bench task one', 'return true, "one", { n = 1 }'],
  ['the throughput bench task two', 'return tasks.first.outputs.n == 1, "two"'],
  [
    'branches and bounded library calls',
    'if vars.x then print(tostring(os.time())) end return string.upper(vars.name or "")',
  ],
  ['os.getenv (reads the env the engine gives)', 'return os.getenv("HOME") ~= nil'],
];

const NOT_PURE: [string, string][] = [
  ['a module function, even a read-only one', 'return file.read("/etc/passwd")'],
  ['io.open', 'local f = io.open("/etc/passwd") return f ~= nil'],
  ['io.popen', 'return io.popen("id")'],
  ['os.execute', 'return os.execute("id")'],
  ['os.remove', 'return os.remove("/tmp/x")'],
  ['os.rename', 'return os.rename("/tmp/x", "/tmp/y")'],
  ['require', 'return require("x")'],
  ['load', 'return load("return io")()'],
  ['dofile', 'return dofile("/etc/passwd")'],
  ['a library table kept in a local', 'local o = os return o.execute("id")'],
  ['_ENV', 'return _ENV["io"]'],
  ['a string method', 'return ("x"):rep(3)'],
  ['a loop', 'for i = 1, 3 do print(i) end'],
  ['a function of its own', 'local function f() return 1 end return f()'],
  ['a syntax error', 'return ('],
];

describe.each([
  ['inline', inline],
  ['auto', auto],
])('sideEffectFree (%s runtime)', (_mode, runtime) => {
  it.each(PURE)('%s: pure', (_name, source) => {
    expect(runtime.sideEffectFree(source)).toBe(true);
  });
  it.each(NOT_PURE)('%s: not pure', (_name, source) => {
    expect(runtime.sideEffectFree(source)).toBe(false);
  });
});

// A script that leaves no trace runs in a state kept for such scripts (runtime.ts): what one run
// had must be gone for the next, as in a fresh state.
describe('the state kept for scripts that leave no trace', () => {
  const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
  const run = (source: string, globals: Record<string, LuaValue> = {}) =>
    inline.run(source, { chunkName: 'kept', globals, logger: silent }).then((r) => r.values);

  it('is reused by runs side by side, each seeing its own globals and none of the others', async () => {
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run('return hook.id, other == nil', { hook: { id: i } })),
    );
    expect(runs).toEqual(Array.from({ length: 20 }, (_, i) => [i, true]));
    expect(await run('return hook == nil, dry_run')).toEqual([true, false]);
  });

  it('is not given a script that sets a global, nor one that names random: they get fresh states', async () => {
    expect(await run('counter = (counter or 0) + 1 return counter')).toEqual([1]);
    expect(await run('counter = (counter or 0) + 1 return counter')).toEqual([1]);
    expect(await run('return counter')).toEqual([null]);
    expect(leavesNoTrace(inline.chunkProto('counter = 1', 'x'))).toBe(false);
    expect(leavesNoTrace(inline.chunkProto('return math.random(6)', 'x'))).toBe(false);
    expect(leavesNoTrace(inline.chunkProto('local t = { a = hook.x } t.b = 1 return t', 'x'))).toBe(true);
  });

  it('keeps nothing a run changed in its own tables, nor an error a run ended with', async () => {
    expect(await run('hook.seen = true return hook.seen', { hook: {} })).toEqual([true]);
    expect(await run('return hook.seen', { hook: {} })).toEqual([null]);
    await expect(run('error("boom")')).rejects.toThrow('boom');
    expect(await run('return 1 + 1')).toEqual([2]);
  });

  it('is waited for by runs started while it is taken, which copy no state of their own', async () => {
    // A slice of 0 ms: after the first run of a turn every other one is queued for the next.
    const sliced = new LuaRuntimeService(registry, { sliceMs: 0, poolSize: 0 });
    try {
      const runOn = (i: number) =>
        sliced.run('return hook.id', { chunkName: 'kept', globals: { hook: { id: i } }, logger: silent });
      await runOn(-1);
      const made = sliced.statesMade;
      const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => runOn(i)));
      expect(runs.map((r) => r.values)).toEqual(Array.from({ length: 20 }, (_, i) => [i]));
      expect(sliced.statesMade).toBe(made);
    } finally {
      sliced.close();
    }
  });

  it('keeps the chunks it loaded apart by name: errors name the chunk of their own run', async () => {
    const failing = 'local t = nil return t.x';
    await expect(inline.run(failing, { chunkName: '=one', logger: silent })).rejects.toThrow(/^one:1:/);
    await expect(inline.run(failing, { chunkName: '=two', logger: silent })).rejects.toThrow(/^two:1:/);
    await expect(inline.run(failing, { chunkName: '=one', logger: silent })).rejects.toThrow(/^one:1:/);
    expect(await run('return 40 + 2')).toEqual([42]);
    expect(await run('return 40 + 2')).toEqual([42]);
  });

  it('is not used when a run gives a global the fresh state holds (clearing it would remove it)', async () => {
    expect(await run('return print == "shadowed"', { print: 'shadowed' })).toEqual([true]);
    expect(await run('return type(print)')).toEqual(['function']);
  });
});
