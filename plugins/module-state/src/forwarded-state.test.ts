import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  definePlugin,
  StateForwarderRef,
  StateServiceRef,
  StoreRef,
  type LuaCallContext,
  type StateForwarder,
  type StateRequest,
} from '@runner/plugin-sdk';
import { luaCallContext, setUpLuaModules } from '@runner/plugin-sdk/testing';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterEach, describe, expect, it } from 'vitest';
import { plugin } from '../index.js';

type Impl = Record<string, (call: LuaCallContext, ...args: any[]) => any>;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function inRun(workflow: string, task: string, runId: string, dryRun = false): LuaCallContext {
  return luaCallContext({ dryRun, run: { workflow, task, runId, attempt: 1, agent: 'web-1' } }).call;
}

/**
 * An agent-like process: module-state without a store, forwarding to a "master" that is another
 * real module-state over a real store. The master side decides the workflow and dry-run from its
 * own record of the run (here: a map), as the agent transport does.
 */
async function agentAndMaster() {
  const master = await setUpLuaModules([storePlugin, plugin], [], mkdtempSync(join(tmpdir(), 'state-master-')));
  stops.push(() => master.kernel.stop());
  const service = master.kernel.get(StateServiceRef);
  const delegated = new Map([['run-1', { workflow: 'deploy', dryRun: false }]]);
  const asked: { request: StateRequest; run: { runId: string; task: string } }[] = [];
  const forwarder: StateForwarder = {
    forward: async (request, run) => {
      asked.push({ request, run });
      const record = delegated.get(run.runId);
      if (!record) throw new Error(`run ${run.runId} is not delegated to this agent`);
      return service.perform(request, { workflow: record.workflow, task: run.task, dryRun: record.dryRun });
    },
  };
  const transport = definePlugin({
    id: 'test-forwarder',
    version: '0.0.0',
    description: 'stands for the agent side of the transport',
    provides: [StateForwarderRef],
    setup: (ctx) => ctx.provide(StateForwarderRef, forwarder),
  });
  const agent = await setUpLuaModules([transport, plugin]);
  stops.push(() => agent.kernel.stop());
  return { agent: agent.modules.get('state') as Impl, master: master.modules.get('state') as Impl, asked };
}

describe('state on an agent', () => {
  it('forwards every call and reads back what the master stored', async () => {
    const { agent, master, asked } = await agentAndMaster();
    const call = inRun('deploy', 'render', 'run-1');
    expect(await agent.changed(call, 'cfg', { b: 1, a: [1, 2] })).toBe(true);
    expect(await agent.changed(call, 'cfg', { a: [1, 2], b: 1 })).toBe(false);
    expect(await agent.set(call, 'n', 7, { scope: 'task' })).toEqual({ changed: true });
    expect(await agent.get(call, 'n', { scope: 'task' })).toBe(7);
    expect(await agent.keys(call)).toEqual(['cfg']);
    // The master's own tasks see the agent's values in the same scopes.
    expect(await master.get(inRun('deploy', 'restart', 'run-2'), 'cfg')).toEqual({ a: [1, 2], b: 1 });
    expect(await master.get(inRun('deploy', 'render', 'run-2'), 'n', { scope: 'task' })).toBe(7);
    expect(asked[0].run).toEqual({ runId: 'run-1', task: 'render' });
  });

  it('checks arguments before anything travels, with the messages of the master', async () => {
    const { agent, asked } = await agentAndMaster();
    const call = inRun('deploy', 'render', 'run-1');
    await expect(agent.set(call, 'k', 'x'.repeat(1024 * 1024))).rejects.toThrow(
      'state.set: value is 1048578 bytes as JSON (at most 1048576)',
    );
    expect(() => agent.get(call, '')).toThrow('state.get: argument 1 must be a key');
    await expect(agent.changed(call, 'k', [1, NaN])).rejects.toThrow('state.changed: argument 2[2] is NaN');
    expect(asked).toEqual([]);
  });

  it('refuses outside a delegated task, and passes on the master refusal', async () => {
    const { agent } = await agentAndMaster();
    await expect(agent.get(luaCallContext().call, 'k')).rejects.toThrow(
      "state.get: on an agent, state works only in a task the master delegated here (it lives in the master's store)",
    );
    await expect(agent.get(inRun('deploy', 'render', 'run-9'), 'k')).rejects.toThrow(
      'run run-9 is not delegated to this agent',
    );
  });
});

describe('state with neither a store nor a master', () => {
  it('raises a clear error instead of keeping state that would not last', async () => {
    const { modules, kernel } = await setUpLuaModules([plugin]);
    stops.push(() => kernel.stop());
    const call = luaCallContext().call;
    await expect(modules.get('state')!.get(call, 'k')).rejects.toThrow(
      'state.get: no durable store in this process and no master to forward to',
    );
    await expect(modules.get('state')!.changed(call, 'k', 1)).rejects.toThrow('state.changed: no durable store');
  });
});

describe('the store-backed service', () => {
  it('checks requests that come off the wire', async () => {
    const master = await setUpLuaModules([storePlugin, plugin], [], mkdtempSync(join(tmpdir(), 'state-master-')));
    stops.push(() => master.kernel.stop());
    const service = master.kernel.get(StateServiceRef);
    const caller = { workflow: 'deploy', task: 'render', dryRun: false };
    // Checked before anything is read or written: the error is thrown at once.
    expect(() => service.perform({ operation: 'drop' as 'get', scope: 'workflow', key: 'k' }, caller)).toThrow(
      'state: unknown operation "drop" (known: get, keys, set, changed, clear)',
    );
    expect(() => service.perform({ operation: 'keys', scope: 'run' as 'task', key: '' }, caller)).toThrow(
      'state.keys: option scope must be "workflow", "task" or "global", got "run"',
    );
    expect(() =>
      service.perform({ operation: 'set', scope: 'global', key: 'k'.repeat(513), value: 1 }, caller),
    ).toThrow('state.set: key is 513 characters long (at most 512)');
    expect(await master.kernel.get(StoreRef).all('SELECT * FROM state')).toEqual([]);
  });
});
