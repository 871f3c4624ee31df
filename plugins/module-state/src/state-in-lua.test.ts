// The state module from real Lua through the real runtime and store: what the module's own tests
// cannot show is where Lua can and cannot wait for an answer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LuaRuntimeRef, type LuaValue } from '@runner/plugin-sdk';
import { createTestKernel, luaCallContext, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaPlugin } from '@runner/plugin-lua-runtime';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin as statePlugin } from '../index.js';

let kernel: TestKernel;
beforeAll(async () => {
  kernel = await createTestKernel({
    plugins: [luaPlugin, storePlugin, statePlugin],
    dataDir: mkdtempSync(join(tmpdir(), 'state-in-lua-')),
  });
});
afterAll(() => kernel.stop());

async function lua(source: string): Promise<LuaValue[]> {
  const { values } = await kernel.get(LuaRuntimeRef).run(source, {
    chunkName: 'test',
    logger: luaCallContext().call.logger,
    run: { workflow: 'deploy', task: 'render', runId: 'run-1', attempt: 1, agent: 'localhost' },
  });
  return values;
}

describe('state in Lua over a store', () => {
  it('waits for reads and writes, so values read into a local serve where Lua cannot wait', async () => {
    expect(
      await lua(`
        state.set("host", "web-1")
        state.set("rank", { b = 1, a = 2 })
        local values = { host = state.get("host") }
        local text = string.gsub("$host:$port", "%$(%w+)", function(k) return values[k] or "?" end)
        local rank = state.get("rank")
        local names = { "a", "b" }
        table.sort(names, function(x, y) return rank[x] < rank[y] end)
        local keys = {}
        for _, k in ipairs(state.keys()) do keys[#keys + 1] = k end
        return text, names[1], table.concat(keys, ",")`),
    ).toEqual(['web-1:?', 'b', 'host,rank']);
  });

  it('says so when a read is asked where Lua cannot wait (the store answers asynchronously)', async () => {
    await expect(
      lua(`return (string.gsub("$host", "%$(%w+)", function(k) return state.get(k) or "?" end))`),
    ).rejects.toThrow(/state.get has to wait, which is not possible here \(inside a sort comparator, a gsub callback/);
  });

  it('a bad argument is a Lua error pcall catches, with the module message', async () => {
    expect(
      await lua(`
        local ok, err = pcall(state.get, "")
        local ok2, err2 = pcall(state.set, "k", 0/0)
        return ok, err, ok2, err2`),
    ).toEqual([
      false,
      'state.get: argument 1 must be a key (a non-empty string), got an empty string',
      false,
      'state.set: argument 2 is NaN, which cannot be stored (only finite numbers)',
    ]);
  });
});
