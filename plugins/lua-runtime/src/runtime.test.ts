import { defineLuaModule, InvalidInputError, LuaError, NotFoundError, type LuaRunOptions } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { fn, testRuntime } from './test-support.js';

const RUN: LuaRunOptions['run'] = { workflow: 'deploy', runId: 'r-1', task: 'build', attempt: 1, agent: 'localhost' };

describe('compile', () => {
  const { runtime } = testRuntime();

  it('accepts a chunk that compiles, running nothing', () => {
    expect(() => runtime.compile('error("never runs")', 'build')).not.toThrow();
  });

  it('reports a syntax error as InvalidInputError with chunk name, line and column', () => {
    let error: unknown;
    try {
      runtime.compile('local a = 1\nif a then\n  b = = 2\nend', 'build');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    const e = error as InvalidInputError;
    expect(e.code).toBe('invalid_input');
    expect(e.message).toBe("build:3: unexpected symbol near '='");
    expect(e.details).toMatchObject({ line: 3, incomplete: false });
  });

  it('gives the column when the token Lua names occurs once on the line', () => {
    try {
      runtime.compile('x = 1\ny = 2 end', 'build');
      expect.unreachable();
    } catch (e) {
      expect((e as InvalidInputError).message).toBe("build:2: <eof> expected near 'end'");
      expect((e as InvalidInputError).details).toEqual({ line: 2, column: 7, incomplete: false });
    }
  });

  it('marks input that more lines could complete as incomplete', () => {
    try {
      runtime.compile('if x then\n  y = 1', 'repl');
      expect.unreachable();
    } catch (e) {
      expect((e as InvalidInputError).message).toBe("repl:2: 'end' expected (to close 'if' at line 1) near <eof>");
      expect((e as InvalidInputError).details).toMatchObject({ line: 2, incomplete: true });
    }
  });
});

describe('run', () => {
  it("resolves with the chunk's return values", async () => {
    const { values } = testRuntime();
    expect(await values('return true, "built", { artifact = "web-1.0.tgz" }')).toEqual([
      true,
      'built',
      { artifact: 'web-1.0.tgz' },
    ]);
    expect(await values('local x = 1')).toEqual([]);
    expect(await values('return nil, 2')).toEqual([null, 2]);
  });

  it('makes the globals it is given visible to the script', async () => {
    const { values } = testRuntime();
    const globals = {
      vars: { app: 'web' },
      values: { port: 8081 },
      item: 'web-1',
      loop_index: 0,
      task: { name: 'build', attempt: 2 },
      workflow: { name: 'deploy', run_id: 'r-1' },
      env: { HOME: '/home/ci' },
      tasks: { fetch: { status: 'success', outputs: { sha: 'abc' } } },
      dry_run: true,
    };
    const script = `return vars.app, values.port, item, loop_index, task.name, task.attempt, workflow.run_id,
      env.HOME, tasks.fetch.outputs.sha, dry_run`;
    expect(await values(script, { globals })).toEqual([
      'web',
      8081,
      'web-1',
      0,
      'build',
      2,
      'r-1',
      '/home/ci',
      'abc',
      true,
    ]);
  });

  it('sets dry_run from the dryRun option unless the globals set it', async () => {
    const { values } = testRuntime();
    expect(await values('return dry_run', { dryRun: true })).toEqual([true]);
    expect(await values('return dry_run')).toEqual([false]);
  });

  it('rejects a global name that is not a Lua identifier', async () => {
    const { run } = testRuntime();
    await expect(run('return 1', { globals: { 'not-a-name': 1 } })).rejects.toThrow(
      /global "not-a-name" is not a Lua identifier/,
    );
  });

  it('rejects a syntax error as compile() reports it, with the task named', async () => {
    const { run } = testRuntime();
    const error = await run('return +', { chunkName: 'build', run: RUN }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toBe("task build: build:1: unexpected symbol near '+'");
  });

  it('rejects a runtime error with a LuaError naming the task, the chunk and the line', async () => {
    const { run } = testRuntime();
    const error = await run('local cfg = {}\nlocal ok = true\n\nreturn cfg.missing.field', {
      chunkName: 'build',
      run: RUN,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LuaError);
    const e = error as LuaError;
    expect(e.code).toBe('lua_error');
    expect(e.message).toBe(`task build: [string "build"]:4: attempt to index a nil value (field 'missing')`);
    expect(e.details).toMatchObject({ line: 4, chunk: 'build' });
    expect(e.details?.traceback).toContain('[string "build"]:4: in main chunk');
  });

  it('gives an error raised inside a function the line in the script', async () => {
    const { run } = testRuntime();
    const error = (await run('local function check(x)\n  if not x then error("no x") end\nend\ncheck(nil)', {
      chunkName: 'c',
    }).catch((e: unknown) => e)) as LuaError;
    expect(error.message).toBe('[string "c"]:2: no x');
    expect(error.details?.line).toBe(2);
  });

  it('reports a non-string error value and keeps it in details', async () => {
    const { run } = testRuntime();
    const error = (await run('error({ code = 42 })').catch((e: unknown) => e)) as LuaError;
    expect(error.message).toBe('[string "test"]:1: (error object is a table value)');
    expect(error.details?.value).toEqual({ code: 42 });
  });

  it('fails a run whose return value JavaScript cannot hold, saying which', async () => {
    const { run } = testRuntime();
    await expect(run('return 1, { f = io.stdout }')).rejects.toThrow(
      'test: return value #2.f: a userdata cannot be converted to a JavaScript value',
    );
  });

  it('sends print and io.write to the log, line by line', async () => {
    const { run, logger } = testRuntime();
    await run('print("hello", 1, nil, true)\nio.write("a", 1, " ", 2.5, "\\n", "partial")');
    expect(logger.lines).toEqual([
      { level: 'info', message: 'hello\t1\tnil\ttrue', fields: { stream: 'stdout' } },
      { level: 'info', message: 'a1 2.5', fields: { stream: 'stdout' } },
      { level: 'info', message: 'partial', fields: { stream: 'stdout' } },
    ]);
  });

  it('sends io.stderr to the log as warnings', async () => {
    const { run, logger } = testRuntime();
    await run('io.stderr:write("careful\\n")');
    expect(logger.lines).toEqual([{ level: 'warn', message: 'careful', fields: { stream: 'stderr' } }]);
  });

  it('sends stdout to a sink when one is given', async () => {
    const { run, logger } = testRuntime();
    const chunks: string[] = [];
    await run('print("x") io.write("y")', { io: { stdout: (text) => chunks.push(text) } });
    expect(chunks.join('')).toBe('x\ny');
    expect(logger.lines).toEqual([]);
  });

  it('raises an error for os.exit instead of ending the process', async () => {
    const { run } = testRuntime();
    await expect(run('os.exit(1)')).rejects.toThrow(
      '[string "test"]:1: os.exit cannot end the runner (return false to fail a task, error() to stop a script)',
    );
    const { values } = testRuntime();
    expect(await values('local ok, err = pcall(os.exit, 0) return ok, err')).toEqual([
      false,
      'os.exit cannot end the runner (return false to fail a task, error() to stop a script)',
    ]);
  });

  it('does not let one run see what another changed', async () => {
    const { values } = testRuntime({ poolSize: 1 });
    await values(`
      leaked = "yes"
      string.shout = function(s) return s:upper() end
      getmetatable("").__index = { len = function() return -1 end }
      table.insert = nil
      package.loaded.mine = { 1 }
      debug.setmetatable(0, { __index = { twice = function(n) return n * 2 end } })
    `);
    // Let the pool refill, so the next run takes a state built before the first ended.
    await new Promise((resolve) => setImmediate(resolve));
    expect(
      await values(
        `return leaked, string.shout, ("abc"):len(), type(table.insert), package.loaded.mine, getmetatable(0)`,
      ),
    ).toEqual([null, null, 3, 'function', null, null]);
  });

  it('ends runaway recursion through pcall as Lua does, even while time slices yield', async () => {
    // A 1 ms slice makes the script yield often: a resume must not reset the limit on nesting.
    const { values } = testRuntime({ sliceMs: 1 });
    expect(await values('local function f() return pcall(f) end return select("#", f())')).toEqual([181]);
    expect(
      await values('local n = 0 local function f() n = n + 1 return pcall(f) end local r = { f() } return n, r[#r]'),
    ).toEqual([181, '[string "test"]:1: stack overflow (more than 180 nested pcalls)']);
    expect(
      await values(
        'local t = setmetatable({}, { __index = function(t, k) return t[k] end }) return pcall(function() return t.x end)',
      ),
    ).toEqual([false, '[string "test"]:1: JS stack overflow']);
  });

  it('returns many values', async () => {
    const { values } = testRuntime();
    expect(await values('local t = {} for i = 1, 300 do t[i] = i end return table.unpack(t)')).toHaveLength(300);
  });
});

describe('module functions', () => {
  const math2 = defineLuaModule({
    name: 'm',
    description: 'test module',
    functions: {
      add: fn(),
      pair: fn(),
      none: fn(),
      fail: fn(),
      failAsync: fn(),
      notFound: fn(),
      ctx: fn(),
      echo: fn(),
    },
  });
  const make = () =>
    testRuntime({
      modules: [
        [
          math2,
          {
            add: (_call, a, b) => (a as number) + (b as number),
            pair: () => ({ kind: 'lua-multiple', values: [1, 'two'] }),
            none: () => undefined,
            fail: () => {
              throw new Error('boom');
            },
            failAsync: async () => {
              throw new Error('async boom');
            },
            notFound: () => {
              throw new NotFoundError('no such thing');
            },
            ctx: (call) => ({ dryRun: call.dryRun, task: call.run?.task ?? null, aborted: call.signal.aborted }),
            echo: (_call, ...args) => ({ kind: 'lua-multiple', values: args }),
          },
        ],
      ],
    });

  it('are global tables with the declared functions, no require needed', async () => {
    const { values } = make();
    expect(await values('return type(m), type(m.add), m.add(2, 3)')).toEqual(['table', 'function', 5]);
  });

  it('return several values with luaMultiple, none for undefined', async () => {
    const { values } = make();
    expect(await values('return m.pair()')).toEqual([1, 'two']);
    expect(await values('return select("#", m.none())')).toEqual([0]);
  });

  it('receive the arguments Lua passed, nil as null', async () => {
    const { values } = make();
    expect(await values('return m.echo(1, nil, "x")')).toEqual([1, null, 'x']);
    expect(await values('return select("#", m.echo())')).toEqual([0]);
  });

  it('raise JavaScript errors as Lua errors that pcall catches, with the message as value', async () => {
    const { values } = make();
    expect(await values('return pcall(m.fail)')).toEqual([false, 'boom']);
    expect(await values('return pcall(m.failAsync)')).toEqual([false, 'async boom']);
    expect(await values('local ok, e = pcall(function() m.fail() end) return e')).toEqual(['boom']);
  });

  it('fail an uncaught call with the line of the call and the JavaScript error as cause', async () => {
    const { run } = make();
    const error = (await run('local x = 1\nm.notFound()', { chunkName: 'build', run: RUN }).catch(
      (e: unknown) => e,
    )) as LuaError;
    expect(error).toBeInstanceOf(LuaError);
    expect(error.message).toBe('task build: [string "build"]:2: no such thing');
    expect(error.cause).toBeInstanceOf(NotFoundError);
    expect(error.details?.line).toBe(2);
  });

  it('get the call context: dry-run, where the script runs, a live signal', async () => {
    const { values } = make();
    expect(await values('return m.ctx()', { dryRun: true, run: RUN })).toEqual([
      { dryRun: true, task: 'build', aborted: false },
    ]);
  });
});
