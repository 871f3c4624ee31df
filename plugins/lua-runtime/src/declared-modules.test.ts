// Every Lua module of every built-in plugin, as `runner modules list` finds them: each function
// declares what placement and `runner modules info` read (args, result, sideEffects, callsLua), and
// the registry accepts every module, so none can be left out of the check by being set up late.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { functionSpecProblem, isPlugin, LuaModulesRef, luaSignature, type Plugin } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { plugin as luaRuntime } from '../index.js';

const pluginsDir = fileURLToPath(new URL('../../', import.meta.url));

/** The built-in plugins, found as the kernel finds them: a package.json saying `runner.plugin`. */
async function builtinPlugins(): Promise<Plugin[]> {
  const found: Plugin[] = [];
  for (const name of readdirSync(pluginsDir)) {
    let manifest: { runner?: { plugin?: boolean } };
    try {
      manifest = JSON.parse(readFileSync(join(pluginsDir, name, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (manifest.runner?.plugin !== true) continue;
    const entry = (await import(join(pluginsDir, name, 'index.ts'))) as { plugin?: unknown };
    if (isPlugin(entry.plugin)) found.push(entry.plugin);
  }
  return found;
}

describe('every Lua module of the built-in plugins', async () => {
  const builtin = await builtinPlugins();
  const offering = builtin.filter((p) => (p.luaModules ?? []).length > 0);
  // Some module plugins keep tables (state, SSH profiles): the real store, in a temporary directory.
  const store = builtin.filter((p) => p.id === 'store');
  const declared = offering.flatMap((p) => p.luaModules!.map((spec) => ({ plugin: p.id, spec })));

  it('declares args, result, side effects and whether it calls Lua back for each function', () => {
    expect(declared.length).toBeGreaterThanOrEqual(10);
    const problems = declared.flatMap(({ plugin, spec }) =>
      Object.entries(spec.functions).flatMap(([name, fn]) => {
        const problem = functionSpecProblem(fn);
        return problem ? [`${plugin}: ${spec.name}.${name} ${problem}`] : [];
      }),
    );
    expect(problems).toEqual([]);
    for (const { spec } of declared)
      for (const [name, fn] of Object.entries(spec.functions))
        expect(luaSignature(name, fn), `${spec.name}.${name}`).toMatch(new RegExp(`^${name}\\(`));
  });

  it('has unique names, and every one is registered once its plugin is set up', async () => {
    const names = declared.map((d) => d.spec.name);
    expect(new Set(names).size).toBe(names.length);
    const kernel = await createTestKernel({
      plugins: [luaRuntime, ...store, ...offering],
      dataDir: mkdtempSync(join(tmpdir(), 'declared-modules-')),
    });
    try {
      const registered = kernel.get(LuaModulesRef).list();
      expect(registered.map((s) => s.name).sort()).toEqual([...names].sort());
      for (const spec of registered)
        for (const [name, fn] of Object.entries(spec.functions))
          expect(functionSpecProblem(fn), `${spec.name}.${name}`).toBeNull();
    } finally {
      await kernel.stop();
    }
  });
});
