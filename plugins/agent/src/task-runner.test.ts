// Delegated tasks run with a real Lua runtime and real module plugins, as on an agent.
import { LuaModulesRef, LuaRuntimeRef, type Logger } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleLog } from '@runner/plugin-modules-script';
import type { LogEntry, TaskRequest__Output } from '@runner/proto';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interpret, runTask } from './task-runner.js';

let kernel: TestKernel;
beforeAll(async () => {
  // Worker isolation, where a memory limit is a worker's heap limit (the memory_limit case below).
  kernel = await createTestKernel({
    plugins: [luaRuntime, moduleLog],
    profile: 'agent',
    config: { 'lua.isolation': 'worker' },
  });
});
afterAll(() => kernel.stop());

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => quiet };

function request(script: string, overrides: Partial<TaskRequest__Output> = {}): TaskRequest__Output {
  return {
    run_id: 'r1',
    workflow: 'wf',
    task: 'greet',
    unit: 'greet[web-1]',
    script,
    globals_json: JSON.stringify({
      vars: { app: 'web' },
      values: { port: 8081 },
      item: 'web-1',
      loop_index: 1,
      task: { name: 'greet', attempt: 1 },
    }),
    dry_run: false,
    timeout_ms: 0,
    attempt: 1,
    memory_limit_mib: 0,
    ...overrides,
  };
}

async function run(
  script: string,
  overrides: Partial<TaskRequest__Output> = {},
  signal = new AbortController().signal,
) {
  const lines: LogEntry[] = [];
  const result = await runTask(
    request(script, overrides),
    { agent: 'web-1', runtime: kernel.get(LuaRuntimeRef), logger: quiet, logBytes: 1024, scriptEnvNames: ['HOME'] },
    { signal, log: (entry) => lines.push(entry) },
  );
  return { result, lines };
}

describe('delegated tasks on the agent', () => {
  it("sees this host's allow-listed environment, never an env the master sent", async () => {
    process.env.RUNNER_TEST_AGENT_SECRET = 'agent-secret';
    process.env.AGENT_ONLY_VAR = 'not listed';
    try {
      const globals = JSON.parse(request('').globals_json) as Record<string, unknown>;
      const { result } = await run(
        'return true, tostring(env.HOME) .. "|" .. tostring(env.MASTER_SECRET) .. "|" .. tostring(os.getenv("AGENT_ONLY_VAR")) .. "|" .. tostring(os.getenv("HOME"))',
        { globals_json: JSON.stringify({ ...globals, env: { MASTER_SECRET: 'from-master', HOME: '/master' } }) },
      );
      expect(result.message).toBe(`${process.env.HOME}|nil|nil|${process.env.HOME}`);
    } finally {
      delete process.env.RUNNER_TEST_AGENT_SECRET;
      delete process.env.AGENT_ONLY_VAR;
    }
  });

  it('has the agent profile modules', () => {
    expect(
      kernel
        .get(LuaModulesRef)
        .list()
        .map((m) => m.name),
    ).toContain('log');
  });

  it('reads globals, logs through the log module, returns message and outputs', async () => {
    const { result, lines } = await run(`
      log.info("port is " .. values.port, { item = item })
      return true, "hello from " .. item .. " for " .. vars.app, { port = values.port, n = loop_index }
    `);
    expect(result).toMatchObject({
      success: true,
      message: 'hello from web-1 for web',
      outputs_json: '{"port":8081,"n":1}',
    });
    expect(result.duration).toBeGreaterThan(0);
    expect(lines).toEqual([
      {
        timestamp: expect.any(String),
        level: 'LOG_LEVEL_INFO',
        message: 'port is 8081',
        fields_json: '{"item":"web-1"}',
      },
    ]);
  });

  it('a Lua error or false is a failed result with the message', async () => {
    expect((await run('error("nope")')).result).toMatchObject({
      success: false,
      message: expect.stringMatching(/greet:1: nope/),
    });
    expect((await run('return false, "bad input"')).result).toMatchObject({ success: false, message: 'bad input' });
    expect((await run('return 42')).result).toMatchObject({
      success: false,
      message: expect.stringMatching(/returned a number/),
    });
    expect((await run('return (')).result).toMatchObject({ success: false });
  });

  it('stops a script at its timeout and when the master cancels it', async () => {
    const timed = await run('while true do end', { timeout_ms: 100 });
    expect(timed.result.success).toBe(false);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled by the master')), 100);
    const cancelled = await run('while true do end', {}, controller.signal);
    expect(cancelled.result.success).toBe(false);
  });

  it("runs the script with the workflow's memory_limit the master sent", async () => {
    const { result } = await run('local t = {} for i = 1, 1e8 do t[i] = i end return true', {
      memory_limit_mib: 64,
    });
    expect(result).toMatchObject({ success: false, message: expect.stringMatching(/memory limit of 64 MiB exceeded/) });
  }, 60_000);

  it('cuts a chatty task log at the cap with one note', async () => {
    const { lines } = await run('for i = 1, 100 do log.info("line " .. i) end');
    expect(lines.length).toBeLessThan(30);
    expect(lines[lines.length - 1]).toMatchObject({
      level: 'LOG_LEVEL_WARN',
      message: expect.stringMatching(/stopped sending this task's log at 1024 bytes/),
    });
  });

  it('refuses a task with side effects while the disk has less free space than resources.disk.min_free; a pure one runs', async () => {
    // 100 TiB must stay free: no disk here has it.
    const minFree = { bytes: 100 * 1024 ** 4, path: tmpdir() };
    const options = { agent: 'web-1', runtime: kernel.get(LuaRuntimeRef), logger: quiet, logBytes: 1024 };
    const context = { signal: new AbortController().signal, log: () => {} };
    const refused = await runTask(
      request('return io.open("/dev/null") ~= nil'),
      { ...options, scriptEnvNames: [], minFree },
      context,
    );
    expect(refused).toMatchObject({
      success: false,
      message: expect.stringMatching(
        new RegExp(
          `^refused: \\d+ MiB free on the file system of ${tmpdir()}, under resources.disk.min_free \\(104857600 MiB\\)`,
        ),
      ),
    });
    const pure = await runTask(request('return true, "pure"'), { ...options, scriptEnvNames: [], minFree }, context);
    expect(pure).toMatchObject({ success: true, message: 'pure' });
  });

  it('reads return values as the engine does', () => {
    expect(interpret([])).toMatchObject({ success: true });
    expect(interpret([null, 'm'])).toMatchObject({ success: true, message: 'm' });
    expect(interpret([true, 'm', [1, 2]])).toMatchObject({
      success: false,
      message: expect.stringMatching(/must be a table with named keys, got a list/),
    });
    expect(interpret([false])).toMatchObject({ success: false, message: 'the script returned false' });
  });
});
