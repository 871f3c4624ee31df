import { functionSpecProblem, LuaModulesRef, type LuaModules, type LuaModuleSpec } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { factsModule, plugin } from '../../index.js';
import { callContext } from './test-support.js';

function fakeModules(): LuaModules & { provided: Map<string, { spec: LuaModuleSpec; impl: Record<string, any> }> } {
  const provided = new Map<string, { spec: LuaModuleSpec; impl: Record<string, any> }>();
  return {
    provided,
    provide(spec, impl) {
      if (provided.has(spec.name)) throw new Error(`module ${spec.name} provided twice`);
      provided.set(spec.name, { spec, impl: impl as Record<string, any> });
    },
    list: () => [...provided.values()].map((p) => p.spec),
  };
}

describe('modules-host plugin: facts', () => {
  it('provides every declared function of the facts module', async () => {
    const modules = fakeModules();
    const kernel = await createTestKernel({ plugins: [plugin], services: [[LuaModulesRef, modules]] });
    const entry = modules.provided.get('facts');
    expect(entry?.spec).toBe(factsModule);
    expect(Object.keys(entry!.impl).sort()).toEqual(Object.keys(factsModule.functions).sort());
    const { call } = callContext();
    expect(await entry!.impl.host(call)).toMatchObject({ hostname: hostname() });
    await kernel.stop();
  });

  it('declares the module for `runner modules info` without setting anything up', () => {
    expect(plugin.id).toBe('modules-host');
    expect(plugin.luaModules).toContain(factsModule);
    expect(plugin.dependsOn).toMatchObject({ lua: LuaModulesRef });
  });

  it('documents each function with a signature, a description and an example; none has side effects', () => {
    for (const [name, spec] of Object.entries(factsModule.functions)) {
      expect(functionSpecProblem(spec), name).toBeNull();
      expect(spec.description.length, name).toBeGreaterThan(40);
      expect(spec.example, name).toContain(`facts.${name}(`);
      expect(spec.sideEffects, name).toBe(false);
    }
  });
});
