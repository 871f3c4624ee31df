// LuaRuntime.sideEffectFree: what a master may run in its own process (the rest goes through its
// local executor, as engine.run_as). On the real compiler and a real state's globals, with a
// module that reads files declared as a real one would be.
import { afterAll, describe, expect, it } from 'vitest';
import { AutoLuaRuntime } from './auto-runtime.js';
import { ModuleRegistry } from './module-registry.js';
import { LuaRuntimeService } from './runtime.js';

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
