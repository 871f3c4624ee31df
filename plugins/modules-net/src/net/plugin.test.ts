import { functionSpecProblem, LuaModulesRef, type LuaModules, type LuaModuleSpec } from '@runner/plugin-sdk';
import { createTestKernel } from '@runner/plugin-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netModule, plugin } from '../../index.js';
import { callContext, startServer, type TestServer } from './test-support.js';

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

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    '/ping': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('pong'),
  });
});
afterAll(() => server.close());

describe('modules-net plugin: net', () => {
  it('provides every declared function of the net module', async () => {
    const modules = fakeModules();
    const kernel = await createTestKernel({ plugins: [plugin], services: [[LuaModulesRef, modules]] });
    const entry = modules.provided.get('net');
    expect(entry?.spec).toBe(netModule);
    expect(Object.keys(entry!.impl).sort()).toEqual(Object.keys(netModule.functions).sort());
    const { call } = callContext();
    const r = await entry!.impl.get(call, server.url('/ping'));
    expect(r).toMatchObject({ status: 200, body: 'pong', ok: true });
    await kernel.stop();
  });

  it('declares the module for `runner modules info` without setting anything up', () => {
    expect(plugin.id).toBe('modules-net');
    expect(plugin.luaModules).toContain(netModule);
    expect(plugin.dependsOn).toMatchObject({ lua: LuaModulesRef });
  });

  it('documents each function with a signature, a description and an example', () => {
    for (const [name, spec] of Object.entries(netModule.functions)) {
      expect(functionSpecProblem(spec), name).toBeNull();
      expect(spec.description.length, name).toBeGreaterThan(40);
      expect(spec.example, name).toContain(`net.${name}(`);
    }
  });

  it('marks only post and download as having side effects', () => {
    const withEffects = Object.entries(netModule.functions)
      .filter(([, spec]) => spec.sideEffects)
      .map(([name]) => name)
      .sort();
    expect(withEffects).toEqual(['download', 'post']);
  });
});
