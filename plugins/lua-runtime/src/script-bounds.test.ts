// lua.isolation: auto's classification, on the real compiler and a real state's globals: each
// bounded example inline, each way out of a bound to a worker. Then real runs in AutoLuaRuntime:
// bounded ones start no worker, an unbounded one runs in one.
import { afterAll, describe, expect, it } from 'vitest';
import { AutoLuaRuntime } from './auto-runtime.js';
import { ModuleRegistry } from './module-registry.js';
import { recordingLogger } from './test-support.js';

const registry = new ModuleRegistry();
registry.provide(
  {
    name: 'exec',
    description: 'test',
    functions: {
      run: {
        args: [{ name: 'cmd', type: 'string' }],
        result: 'table',
        description: 'runs',
        sideEffects: true,
        callsLua: false,
      },
    },
  },
  { run: (_call, cmd) => ({ stdout: `ran ${String(cmd)}`, success: true }) },
);
registry.provide(
  {
    name: 'goroutine',
    description: 'test',
    functions: {
      parallel: {
        args: [{ name: 'fns', type: 'function[]' }],
        result: 'table',
        description: 'calls back',
        sideEffects: false,
        callsLua: true,
      },
      sleep: {
        args: [{ name: 'duration', type: 'string|number' }],
        result: 'nil',
        description: 'waits',
        sideEffects: false,
        callsLua: false,
      },
    },
  },
  { parallel: () => [], sleep: () => undefined },
);
const runtime = new AutoLuaRuntime(registry, { maxWorkers: 2, idleWorkers: 1 });
afterAll(() => runtime.close());

const BOUNDED: [string, string][] = [
  ['the throughput bench task one', 'return true, "one", { n = 1 }'],
  ['the throughput bench task two', 'return tasks.first.outputs.n == 1, "two"'],
  ['a module call', 'local r = exec.run("ls") return r.success, r.stdout'],
  ['a module function kept in a local', 'local r = exec.run; return r("ls")'],
  ['a module method call', 'return exec:run("ls")'],
  ['branches (forward jumps)', 'if vars.x then exec.run("a") elseif vars.y then exec.run("b") else exec.run("c") end'],
  ['and/or', 'local f = vars.x and exec.run or exec.run; return f("a")'],
  [
    'bounded library calls',
    'print(tostring(1), type(vars), tonumber("2")) return math.floor(2.5), string.upper("x"), os.time()',
  ],
  ['a few concatenations', 'local m = "built " .. vars.name .. " in " .. 3 return true, m .. "!"'],
  ['globals of its own', 'x = 1 y = x + 1 return y'],
  ['a table constructor', 'return { a = vars.a, b = { 1, 2, 3 }, exec.run("x") }'],
  ['an error', 'error("no")'],
];
const UNBOUNDED: [string, string, RegExp][] = [
  ['the 1e8 table', 'local t = {} for i = 1, 1e8 do t[i] = i end', /for loop/],
  ['string.rep', 'return string.rep("x", 2^30)', /it calls string\.rep, which is not among/],
  ['string.rep in a local', 'local f = string.rep; return f("x", 1e9)', /string\.rep/],
  ['a string method', 'return ("x"):rep(1e9)', /method 'rep'/],
  ['a string method on data', 'return vars.s:rep(1e9)', /method 'rep'/],
  ['a string function through indexing a string', 'local f = ("x").rep return f("x", 1e9)', /not a module function/],
  ['a backtracking find', 'return string.find(string.rep("a", 90), ".-.-.-.-.-.-b")', /string\.(rep|find)/],
  ['doubling in a while loop', 'local s = "x" while true do s = s .. s end', /loops/],
  ['repeat', 'local i = 0 repeat i = i + 1 until i > 1e9', /loops/],
  ['goto backwards', '::top:: exec.run("x") goto top', /loops/],
  ['doubling written out', `local s = "x" ${'s = s .. s '.repeat(30)} return #s`, /'\.\.'/],
  ['one long concatenation', `local s = vars.s return ${Array(100).fill('s').join(' .. ')}`, /'\.\.'/],
  ['a function', 'local function f() return 1 end return f()', /defines a function/],
  ['recursion', 'function f(n) return f(n + 1) end f(1)', /defines a function/],
  ['pcall', 'return pcall(error, "x")', /global 'pcall'/],
  ['load', 'return load("return 1")()', /global 'load'/],
  ['require', 'return require("x")', /global 'require'/],
  ['select', "return select('#', 1, 2)", /global 'select'/],
  ['setmetatable', 'return setmetatable({}, {})', /global 'setmetatable'/],
  ['_G', 'return _G.string.rep("x", 9)', /global '_G'/],
  ['_ENV as a value', 'local e = _ENV return e.string.rep("x", 9)', /_ENV/],
  ['a computed global', 'local n = "string" return _ENV[n]', /computed name/],
  ['a module function that takes a function', 'return goroutine.parallel({ exec.run })', /goroutine\.parallel/],
  ['replacing a module', 'exec = { run = print } return exec.run("x")', /replaces the global 'exec'/],
  [
    'changing a module',
    'local r = ("x").rep exec.run = r return exec.run("x", 1e9)',
    /module or library table as a value/,
  ],
  ['aliasing a module through a table', 'local t = { exec } t[1].run = print', /module or library table as a value/],
  ['aliasing a module through a join', 'local t = vars.x and exec or {} t.run = ("x").rep', /module or library table/],
  ['calling what a module returned', 'local f = exec.run("x") return f()', /not a module function/],
  ['an undeclared module function', 'return exec.spawn("x")', /exec\.spawn/],
  ['coroutine', 'return coroutine.wrap(print)', /global 'coroutine'/],
  ['table.concat', 'return table.concat({ "a" }, ",")', /global 'table'/],
  ['os.execute', 'return os.execute("sleep 100")', /os\.execute/],
];

describe('lua.isolation: auto decides from the bytecode', () => {
  it.each(BOUNDED)('%s runs inline', (_name, source) => {
    expect(runtime.placement(source)).toEqual({ bounded: true });
  });

  it.each(UNBOUNDED)('%s runs in a worker', (_name, source, reason) => {
    const verdict = runtime.placement(source);
    expect(verdict.bounded).toBe(false);
    expect(!verdict.bounded && verdict.reason).toMatch(reason);
  });

  it('names the line that made a script unbounded', () => {
    expect(runtime.placement('local a = 1\nlocal b = 2\nreturn string.rep("x", 3)')).toMatchObject({ line: 3 });
  });
});

describe('AutoLuaRuntime runs', () => {
  it('bounded scripts inline, starting no worker, and an unbounded one in a worker', async () => {
    const logger = recordingLogger();
    const run = (source: string) => runtime.run(source, { chunkName: 'auto', logger, globals: { vars: { n: 2 } } });
    expect((await run('return exec.run("ls").stdout, vars.n')).values).toEqual(['ran ls', 2]);
    expect(runtime.workers.workers.alive).toBe(0);
    expect((await run('local n = 0 for i = 1, 10 do n = n + i end return n')).values).toEqual([55]);
    expect(runtime.workers.workers.alive).toBe(1);
  });

  it('reports a syntax error as the other modes do', async () => {
    await expect(runtime.run('return (', { chunkName: 'bad', logger: recordingLogger() })).rejects.toThrow(
      /bad:1: unexpected symbol near <eof>/,
    );
  });
});
