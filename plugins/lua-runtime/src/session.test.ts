import { defineLuaModule, InvalidInputError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { fn, recordingLogger, testRuntime } from './test-support.js';

const kv = defineLuaModule({ name: 'kv', description: 'async echo', functions: { get: fn() } });

function session(options: { stdout?: (text: string) => void } = {}) {
  const { runtime } = testRuntime({ modules: [[kv, { get: async (_call, key) => `value of ${String(key)}` }]] });
  const logger = recordingLogger();
  return {
    logger,
    repl: runtime.createSession({ logger, globals: { vars: { app: 'web' } }, io: { stdout: options.stdout } }),
  };
}

describe('REPL sessions', () => {
  it('evaluates expressions as the lua REPL does, and statements', async () => {
    const { repl } = session();
    expect(await repl.eval('1 + 2')).toEqual([3]);
    expect(await repl.eval('vars.app, kv.get("x")')).toEqual(['web', 'value of x']);
    expect(await repl.eval('x = 10')).toEqual([]);
    expect(await repl.eval('return x * 2')).toEqual([20]);
  });

  it('keeps globals from eval to eval, but not locals', async () => {
    const { repl } = session();
    await repl.eval('count = 1');
    await repl.eval('count = count + 1');
    await repl.eval('local hidden = 5');
    expect(await repl.eval('count, hidden')).toEqual([2, null]);
  });

  it('shows values JavaScript cannot hold as text instead of failing', async () => {
    const { repl } = session();
    expect(await repl.eval('io.stdout, coroutine.create(print)')).toEqual(['<userdata>', '<thread>']);
    expect(await repl.eval('(function() local t = {} t.t = t return t end)()')).toEqual([{ t: '<cycle>' }]);
  });

  it('says when more input could complete a statement', async () => {
    const { repl } = session();
    const error = await repl.eval('for i = 1, 3 do').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toMatchObject({ incomplete: true, line: 1 });
    expect((error as Error).message).toBe("stdin:1: 'end' expected near <eof>");
    const complete = await repl.eval('x = = 1').catch((e: unknown) => e);
    expect((complete as InvalidInputError).details).toMatchObject({ incomplete: false });
  });

  it('reports runtime errors with the stdin chunk name and goes on', async () => {
    const { repl } = session();
    await expect(repl.eval('nil + 1')).rejects.toThrow('stdin:1: attempt to perform arithmetic on a nil value');
    expect(await repl.eval('"still here"')).toEqual(['still here']);
  });

  it('stops an eval at its timeout, keeping the session usable', async () => {
    const { repl } = session();
    await repl.eval('before = true');
    await expect(repl.eval('while true do end', { timeoutMs: 30 })).rejects.toMatchObject({ code: 'timeout' });
    expect(await repl.eval('before')).toEqual([true]);
  });

  it('runs evals one at a time, in order', async () => {
    const { repl } = session();
    const results = await Promise.all([repl.eval('kv.get("a")'), repl.eval('n = 1'), repl.eval('n')]);
    expect(results).toEqual([['value of a'], [], [1]]);
  });

  it('prints to the stdout sink', async () => {
    const out: string[] = [];
    const { repl } = session({ stdout: (text) => out.push(text) });
    await repl.eval('print("hi", 1)');
    expect(out.join('')).toBe('hi\t1\n');
  });

  it('refuses evals once closed', async () => {
    const { repl } = session();
    repl.close();
    expect(repl.closed).toBe(true);
    await expect(repl.eval('1')).rejects.toThrow('the Lua session is closed');
  });
});
