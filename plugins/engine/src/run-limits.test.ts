// engine.task_timeout with the real engine, parser, Lua runtime and store.
import { WorkflowEngineRef, type RunRecord } from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { plugin as engine } from './plugin.js';

let kernel: TestKernel | undefined;
afterEach(() => kernel?.stop());

async function run(config: Record<string, unknown>, content: string): Promise<RunRecord> {
  kernel = await createTestKernel({
    plugins: [store, template, luaRuntime, workflow, engine],
    profile: 'master',
    config,
  });
  await kernel.ready();
  const { done } = await kernel.get(WorkflowEngineRef).start({ source: { content, name: 'limits' } });
  return done;
}

const spin = 'local n = 0 while true do n = n + 1 end';

describe('engine.task_timeout', () => {
  it('stops a task without timeout: after the default, naming the limit and the line', async () => {
    const record = await run(
      { engine: { task_timeout: '300ms' } },
      `version: "1.0"\ntasks:\n  - name: spin\n    exec: { script: '${spin}' }\n`,
    );
    expect(record.status).toBe('failed');
    expect(record.tasks[0].message).toMatch(/^timed out after 300 ms \(at spin:1\)/);
    // The spin loops, so the default lua.isolation (auto) runs it in a worker, bundled from source
    // with esbuild at its first start: seconds on a loaded machine.
  }, 60_000);

  it("lets a task's timeout: lower or raise the default", async () => {
    const record = await run(
      { engine: { task_timeout: '300ms' } },
      `version: "1.0"
parallel: 2
tasks:
  - name: short
    timeout: 100ms
    exec: { script: '${spin}' }
  - name: long
    timeout: 60s
    exec: { script: 'local t = os.clock() while os.clock() - t < 0.4 do end return true, "done"' }
`,
    );
    const byName = Object.fromEntries(record.tasks.map((t) => [t.name, t]));
    expect(byName.short.message).toMatch(/^timed out after 100 ms/);
    expect(byName.long).toMatchObject({ status: 'succeeded', message: 'done' });
  }, 60_000);

  it('refuses a value that is not a duration, naming the key', async () => {
    await expect(run({ engine: { task_timeout: 'soon' } }, '')).rejects.toThrow(
      /engine\.task_timeout .*invalid duration "soon"/,
    );
  });
});

describe('engine.memory_limit', () => {
  it('fails a task whose string.rep would exceed it, in MiB, while one within it succeeds', async () => {
    const record = await run(
      { engine: { memory_limit: 1 } },
      `version: "1.0"
tasks:
  - name: small
    exec: { script: 'return true, tostring(#string.rep("x", 1024 * 1024))' }
  - name: big
    exec: { script: 'local s = string.rep("x", 2 * 1024 * 1024) return true' }
`,
    );
    const byName = Object.fromEntries(record.tasks.map((t) => [t.name, t]));
    expect(byName.big.status).toBe('failed');
    expect(byName.big.message).toMatch(
      /^big:1: memory limit of 1\.0 MiB exceeded \(string\.rep would build a string of 2\.0 MiB\)/,
    );
    expect(byName.small).toMatchObject({ status: 'succeeded', message: '1048576' });
  });
});
