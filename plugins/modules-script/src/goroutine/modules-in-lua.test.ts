/**
 * The six module plugins of this set (exec, file, log, state, goroutine, reliability) driven from
 * real Lua through the real runtime, store and template plugins: what the unit tests beside each
 * module cannot show is how values convert at the Lua boundary (nil results, empty tables,
 * multiple returns, raised errors caught by pcall). Cross-plugin, so it could move to test/.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  functionSpecProblem,
  LuaModulesRef,
  LuaRuntimeRef,
  type LuaRunOptions,
  type LuaValue,
} from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaPlugin } from '@runner/plugin-lua-runtime';
import { plugin as hostModules } from '@runner/plugin-modules-host';
import { plugin as statePlugin } from '@runner/plugin-module-state';
import { plugin as storePlugin } from '@runner/plugin-store';
import { plugin as templatePlugin } from '@runner/plugin-template';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin as goroutinePlugin } from '../../index.js';
import { luaCallContext, type LoggedLine } from '@runner/plugin-sdk/testing';

let kernel: TestKernel;
let lines: LoggedLine[];

beforeAll(async () => {
  kernel = await createTestKernel({
    plugins: [luaPlugin, storePlugin, templatePlugin, hostModules, statePlugin, goroutinePlugin],
    dataDir: mkdtempSync(join(tmpdir(), 'modules-in-lua-')),
  });
});

afterAll(async () => {
  await kernel.stop();
});

async function lua(source: string, options: Partial<LuaRunOptions> = {}): Promise<LuaValue[]> {
  const context = luaCallContext();
  lines = context.lines;
  const { values } = await kernel.get(LuaRuntimeRef).run(source, {
    chunkName: 'test',
    logger: context.call.logger,
    run: { workflow: 'deploy', task: 'build', runId: 'run-1', attempt: 1, agent: 'localhost' },
    ...options,
  });
  return values;
}

describe('modules in Lua', () => {
  it('are all setUpLuaModules, each function documented for `runner modules info`', () => {
    const specs = kernel.get(LuaModulesRef).list();
    for (const name of ['exec', 'file', 'log', 'state', 'goroutine', 'reliability']) {
      const spec = specs.find((s) => s.name === name);
      expect(spec, name).toBeDefined();
      for (const [fn, doc] of Object.entries(spec!.functions)) {
        expect(functionSpecProblem(doc), `${name}.${fn} declaration`).toBeNull();
        expect(doc.description.length, `${name}.${fn} description`).toBeGreaterThan(20);
        expect(doc.example, `${name}.${fn} example`).toMatch(new RegExp(`${name}\\.${fn}\\b`));
        expect(typeof doc.sideEffects).toBe('boolean');
      }
    }
  });

  it('exec: results, no shell for lists, timeouts, and dry-run', async () => {
    expect(
      await lua(`
        local r = exec.run("echo hi; echo err >&2; exit 3")
        local l = exec.run({ "printf", "%s", "a b; c" }, {})
        local t = exec.run("sleep 5", { timeout = "100ms" })
        return r.stdout, r.stderr, r.exit_code, r.success, l.stdout, t.timed_out, t.exit_code, t.signal`),
    ).toEqual(['hi\n', 'err\n', 3, false, 'a b; c', true, null, 'SIGTERM']);
    expect(
      await lua(`local r = exec.run("rm -rf /") return r.success, r.skipped, r.exit_code, r.note`, { dryRun: true }),
    ).toEqual([true, true, 0, 'dry-run: would run: rm -rf /']);
  });

  it('goroutine: parallel results in order with nil holes, failures after all, spawn/wait', async () => {
    expect(
      await lua(`
        local order = {}
        local results = goroutine.parallel({
          function() goroutine.sleep("30ms"); order[#order + 1] = "slow"; return 1 end,
          function() order[#order + 1] = "fast"; return exec.run("echo x").stdout end,
          function() end,
          function() return 4 end,
        })
        local ok, err = pcall(goroutine.parallel, { tasks = { function() error("bad", 0) end, function() return 2 end }, max_concurrent = 1 })
        local h = goroutine.spawn(function(a, b) return a + b, "sum" end, 2, 3)
        local s, label = goroutine.wait(h)
        return results[1], results[2], results[3], results[4], order[1], ok, err, s, label`),
    ).toEqual([
      1,
      'x\n',
      null,
      4,
      'fast',
      false,
      expect.stringMatching(/^goroutine\.parallel: task 1 failed: (.*: )?bad$/),
      5,
      'sum',
    ]);
  });

  it('reliability: retry, timeout and circuit breaker errors reach pcall', async () => {
    expect(
      await lua(`
        local calls = 0
        local v, n = reliability.retry({ attempts = 3, delay = "1ms" }, function(attempt)
          calls = calls + 1
          if attempt < 3 then error("flaky") end
          return "done", attempt
        end)
        local ok, err = pcall(reliability.timeout, "30ms", function() goroutine.sleep("5s") end)
        for i = 1, 2 do pcall(reliability.circuit_breaker, "lua-test", { max_failures = 2 }, function() error("down") end) end
        local ok2, err2 = pcall(reliability.circuit_breaker, "lua-test", {}, function() return 1 end)
        return v, n, calls, ok, err, reliability.circuit_state("lua-test").state, err2:match('circuit "lua%-test" is open') ~= nil`),
    ).toEqual(['done', 3, 3, false, 'reliability.timeout: timed out after 30ms', 'open', true]);
  });

  it('file, log and state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modules-in-lua-file-'));
    expect(
      await lua(`
        local d = ${JSON.stringify(dir)}
        local first, second = file.write(d .. "/a", "x\\n").changed, file.write(d .. "/a", "x\\n").changed
        file.line_in_file(d .. "/a", { line = "y" })
        file.write(d .. "/t.j2", "hello {{ who }}")
        file.template(d .. "/t.j2", d .. "/t", { who = "lua" })
        file.mkdir(d .. "/sub/dir", { mode = "0700" })
        log.info("structured", { a = 1, list = { 1, 2 } })
        local c1 = state.changed("cfg", { b = 1, a = { 1, 2 } })
        local c2 = state.changed("cfg", { a = { 1, 2 }, b = 1 })
        local e1, e2 = state.changed("empty", {}), state.changed("empty", {})
        return first, second, file.read(d .. "/a"), file.read(d .. "/t"), file.stat(d .. "/sub/dir").mode,
          file.stat(d .. "/none").exists, c1, c2, e1, e2, state.get("cfg").a[2], state.get("missing")`),
    ).toEqual([true, false, 'x\ny\n', 'hello lua', '0700', false, true, false, true, false, 2, null]);
    expect(lines.find((l) => l.message === 'structured')?.fields).toMatchObject({ a: 1, list: [1, 2] });
  });

  // The per-call cost is a benchmark's figure (test/bench/vs-ansible.mjs, engine-1000-tasks.mjs), not a bound here.
  it('exec.run runs a program given as a string and as a list, many times in one script', async () => {
    for (const cmd of ['"/bin/true"', '{ "/bin/true" }']) {
      expect(
        await lua(`local n = 0 for i = 1, 20 do if exec.run(${cmd}).success then n = n + 1 end end return n`),
      ).toEqual([20]);
    }
  });
});
