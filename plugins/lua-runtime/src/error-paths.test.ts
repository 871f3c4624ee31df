import { LuaError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { fn, testRuntime } from './test-support.js';

/**
 * An error whose message cannot be read: every read throws another such error, so fengari's
 * handler for JavaScript errors would fail too and leave the thread dead with no error value.
 */
class UnreadableError extends Error {
  override get message(): string {
    throw new UnreadableError();
  }
}

const breaker = [
  {
    name: 'breaker',
    description: 'fails in ways scripts cannot',
    functions: { unreadable: fn(), memory: fn(), stack: fn() },
  },
  {
    unreadable: () => {
      throw new UnreadableError();
    },
    memory: () => {
      throw new RangeError('Map maximum size exceeded');
    },
    stack: () => {
      throw new RangeError('Maximum call stack size exceeded');
    },
  },
] as const;

describe('errors that escape fengari', () => {
  it('fail the script, not the process, when the error handler itself fails', async () => {
    const { run } = testRuntime({ modules: [breaker] });
    const failure = await run('breaker.unreadable()', {
      run: { workflow: 'w', runId: 'r', task: 'build', attempt: 1, agent: 'localhost' },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LuaError);
    expect((failure as Error).message).toMatch(/^task build: .*an error whose message cannot be read$/);
  });

  it("report V8's memory and stack RangeErrors in Lua's words, catchable by pcall", async () => {
    const { values, run } = testRuntime({ modules: [breaker] });
    expect(await values('return pcall(breaker.memory)')).toEqual([
      false,
      'not enough memory (Map maximum size exceeded)',
    ]);
    expect(await values('return pcall(breaker.stack)')).toEqual([false, 'stack overflow']);
    await expect(run('breaker.memory()')).rejects.toThrow(
      /"test"\]:1: not enough memory \(Map maximum size exceeded\)/,
    );
  });

  it('leave other scripts running: one that breaks does not stop the time slicer', async () => {
    const { run } = testRuntime({ modules: [breaker], sliceMs: 1 });
    // The spinning script yields at every slice, so the broken one fails between two of its turns.
    const spinner = run('local n = 0.0 for i = 1, 3e5 do n = n + i end return n');
    const broken = run('for i = 1, 1e4 do end breaker.unreadable()');
    await expect(broken).rejects.toBeInstanceOf(LuaError);
    expect((await spinner).values).toEqual([45000150000]);
    // The runtime still serves new runs afterwards.
    expect((await run('return 1 + 1')).values).toEqual([2]);
  });
});
