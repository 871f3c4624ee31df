import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineLuaModule, LuaModulesRef, LuaRuntimeRef } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { plugin } from '../index.js';
import { fn, recordingLogger } from './test-support.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Modules the entry file loads at import time (static, non-type imports), followed through this package. */
function staticImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const source = readFileSync(file, 'utf8');
  for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/gms)) {
    const specifier = match[1];
    if (specifier.startsWith('.')) staticImports(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')), seen);
    else seen.add(specifier);
  }
  return seen;
}

describe('the lua-runtime plugin', () => {
  it('provides the module registry and the runtime, and modules provided later reach scripts', async () => {
    const kernel = await createTestKernel({ plugins: [plugin] });
    const modules = kernel.get(LuaModulesRef);
    const runtime = kernel.get(LuaRuntimeRef);
    modules.provide(defineLuaModule({ name: 'hello', description: 'greets', functions: { world: fn() } }), {
      world: async (call) => `hello from ${call.run?.agent ?? 'nowhere'}`,
    });
    const result = await runtime.run('return hello.world()', {
      chunkName: 'greet',
      logger: recordingLogger(),
      run: { workflow: 'w', runId: 'r', task: 'greet', attempt: 1, agent: 'web-1' },
    });
    expect(result.values).toEqual(['hello from web-1']);
    expect(modules.list().map((m) => m.name)).toEqual(['hello']);
    await kernel.stop();
  });

  it('stops running scripts when the kernel stops', async () => {
    const kernel = await createTestKernel({ plugins: [plugin] });
    const runtime = kernel.get(LuaRuntimeRef);
    const spinning = runtime.run('while true do end', { chunkName: 'spin', logger: recordingLogger() });
    await kernel.stop();
    await expect(spinning).rejects.toMatchObject({ code: 'unavailable' });
    await expect(runtime.run('return 1', { chunkName: 'late', logger: recordingLogger() })).rejects.toThrow(
      'the Lua runtime has stopped',
    );
  });

  it('reads its time slice from the config', async () => {
    const kernel = await createTestKernel({ plugins: [plugin], config: { lua: { time_slice_ms: 'fast' } } }).catch(
      (e: unknown) => e,
    );
    expect(kernel).toBeInstanceOf(Error);
    expect((kernel as Error).message).toBe(
      'config lua.time_slice_ms (from test): expected a number above 0, got "fast"',
    );
  });

  it('declares only keys the environment can set (RUNNER_LUA_MAX_WORKERS is lua.max_workers)', () => {
    // The kernel maps RUNNER_<SECTION>_<REST> to <section>.<rest>: a second dot could not be set.
    for (const key of Object.keys(plugin.config ?? {})) expect(key).toMatch(/^lua\.[a-z0-9_]+$/);
  });

  it('sizes its worker pool from lua.max_workers and lua.idle_workers', async () => {
    const kernel = await createTestKernel({
      plugins: [plugin],
      config: { lua: { isolation: 'worker', max_workers: 1, idle_workers: 0 } },
    });
    const runtime = kernel.get(LuaRuntimeRef) as unknown as { workers: { alive: number; idle: number } };
    const run = (n: number) =>
      kernel.get(LuaRuntimeRef).run(`return ${n}`, { chunkName: 'n', logger: recordingLogger() });
    const [a, b] = await Promise.all([run(1), run(2)]);
    expect([a.values, b.values]).toEqual([[1], [2]]);
    // One worker at most, and none kept idle once the runs are done.
    expect(runtime.workers.alive).toBeLessThanOrEqual(1);
    expect(runtime.workers.idle).toBe(0);
    await kernel.stop();
  });

  it('loads fengari only in setup, so that importing the entry stays cheap', () => {
    const loaded = staticImports(join(root, 'index.ts'));
    expect([...loaded].filter((m) => !m.startsWith('/'))).toEqual(['@runner/plugin-sdk']);
    expect([...loaded].some((m) => m.endsWith('runtime.ts') || m.endsWith('host.ts'))).toBe(false);
  });
});
