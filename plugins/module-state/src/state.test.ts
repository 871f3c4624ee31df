import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreRef, type LuaCallContext, type Store } from '@runner/plugin-sdk';
import type { TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as storePlugin } from '@runner/plugin-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plugin } from '../index.js';
import { createStateModule, MAX_VALUE_BYTES } from './state.js';
import { createStoreState } from './store-state.js';
import { luaCallContext, setUpLuaModules } from '@runner/plugin-sdk/testing';

type Impl = Record<string, (call: LuaCallContext, ...args: any[]) => any>;
let dataDir: string;
let kernel: TestKernel;
let state: Impl;

async function boot(): Promise<void> {
  const set = await setUpLuaModules([storePlugin, plugin], [], dataDir);
  kernel = set.kernel;
  state = set.modules.get('state')!;
}

function inRun(workflow: string, task = 'build', runId = 'run-1', dryRun = false): LuaCallContext {
  return luaCallContext({ dryRun, run: { workflow, task, runId, attempt: 1, agent: 'localhost' } }).call;
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'module-state-'));
  await boot();
});

afterEach(async () => {
  await kernel.stop();
});

describe('state', () => {
  it('stores strings, numbers, booleans and tables and gives nil for absent keys', async () => {
    const call = inRun('deploy');
    expect(await state.get(call, 'missing')).toBeNull();
    const values = ['v1.2', 42, 3.5, true, false, { hosts: ['a', 'b'], port: 80, nested: { ok: true } }, ['x', 'y']];
    for (const [i, value] of values.entries()) {
      expect(await state.set(call, `k${i}`, value)).toEqual({ changed: true });
      expect(await state.get(call, `k${i}`)).toEqual(value);
    }
    expect(await state.set(call, 'k0', 'v1.2')).toEqual({ changed: false });
    expect(await state.keys(call)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
  });

  it('survives a restart', async () => {
    await state.set(inRun('deploy'), 'version', { tag: 'v2', build: 17 });
    await state.set(inRun('deploy'), 'flag', true, { scope: 'global' });
    await kernel.stop();
    await boot();
    expect(await state.get(inRun('deploy', 'other', 'run-2'), 'version')).toEqual({ tag: 'v2', build: 17 });
    expect(await state.get(inRun('other-workflow'), 'flag', { scope: 'global' })).toBe(true);
  });

  it('changed is true for a new or different value, false for the same one, and stores it', async () => {
    const call = inRun('deploy');
    expect(await state.changed(call, 'cfg', { a: 1, b: [1, 2] })).toBe(true);
    // Key order does not matter: tables compare by content.
    expect(await state.changed(call, 'cfg', { b: [1, 2], a: 1 })).toBe(false);
    expect(await state.changed(call, 'cfg', { a: 1, b: [2, 1] })).toBe(true);
    expect(await state.get(call, 'cfg')).toEqual({ a: 1, b: [2, 1] });
    // One empty Lua table, however the runtime converted it.
    expect(await state.changed(call, 'empty', {})).toBe(true);
    expect(await state.changed(call, 'empty', [])).toBe(false);
    expect(await state.changed(call, 'n', 1)).toBe(true);
    expect(await state.changed(call, 'n', '1')).toBe(true);
  });

  it('never lets two concurrent changed calls on one key both see the old value', async () => {
    // sql.js makes a write visible at once; a store over a network (PostgreSQL) would not, so
    // the writes here become visible a turn later, and only the module's own ordering can help.
    const real = kernel.get(StoreRef);
    const lagging: Store = Object.create(real);
    lagging.run = async (sql, params) => {
      await new Promise((resolve) => setImmediate(resolve));
      return real.run(sql, params);
    };
    const module = createStateModule(createStoreState(lagging));
    const call = inRun('deploy');
    await module.set(call, 'release', 'v1');
    const results = await Promise.all(Array.from({ length: 6 }, () => module.changed(call, 'release', 'v2')));
    expect(results.filter(Boolean)).toHaveLength(1);
    // Different keys are not held up by each other.
    expect(await Promise.all([module.changed(call, 'a', 1), module.changed(call, 'b', 1)])).toEqual([true, true]);
  });

  it('keeps workflow, task and global scopes apart', async () => {
    await state.set(inRun('deploy', 'build', 'run-1'), 'k', 'deploy-wide');
    await state.set(inRun('deploy', 'build'), 'k', 'build-task', { scope: 'task' });
    await state.set(inRun('deploy', 'build'), 'k', 'everyone', { scope: 'global' });
    // Same workflow, another run and task: the workflow scope is shared.
    expect(await state.get(inRun('deploy', 'ship', 'run-2'), 'k')).toBe('deploy-wide');
    expect(await state.get(inRun('deploy', 'ship', 'run-2'), 'k', { scope: 'task' })).toBeNull();
    expect(await state.get(inRun('deploy', 'build', 'run-3'), 'k', { scope: 'task' })).toBe('build-task');
    expect(await state.get(inRun('backup'), 'k')).toBeNull();
    expect(await state.get(inRun('backup'), 'k', { scope: 'global' })).toBe('everyone');
    // The same task name in another workflow is another task.
    expect(await state.get(inRun('backup', 'build'), 'k', { scope: 'task' })).toBeNull();
  });

  it('uses a fallback name outside a run (the REPL)', async () => {
    const repl = luaCallContext().call;
    await state.set(repl, 'k', 'from the repl');
    expect(await state.get(repl, 'k')).toBe('from the repl');
    expect(await state.get(inRun('(repl)'), 'k')).toBe('from the repl');
    expect(await state.get(inRun('deploy'), 'k')).toBeNull();
    expect(await state.changed(repl, 't', 1, { scope: 'task' })).toBe(true);
  });

  it('clears, and setting nil clears too', async () => {
    const call = inRun('deploy');
    await state.set(call, 'a', 1);
    expect(await state.clear(call, 'a')).toEqual({ changed: true });
    expect(await state.clear(call, 'a')).toEqual({ changed: false });
    expect(await state.get(call, 'a')).toBeNull();
    await state.set(call, 'b', 1);
    expect(await state.set(call, 'b', null)).toEqual({ changed: true });
    expect(await state.keys(call)).toEqual([]);
  });

  it('writes deterministic SQL: the time is a parameter', async () => {
    await state.set(inRun('deploy'), 'k', 'v');
    const row = await kernel
      .get(StoreRef)
      .get<{ updated_at: string; value: string }>("SELECT updated_at, value FROM state WHERE key = 'k'");
    expect(row?.value).toBe('"v"');
    expect(Date.now() - Date.parse(row!.updated_at)).toBeLessThan(60_000);
  });

  it('stores nothing in dry-run, yet changed still reports the comparison', async () => {
    const dry = inRun('deploy', 'build', 'run-1', true);
    const real = inRun('deploy');
    await state.set(real, 'kept', 'old');
    expect(await state.set(dry, 'kept', 'new')).toEqual({
      changed: false,
      skipped: true,
      would_change: true,
      note: 'dry-run: would set "kept" in workflow "deploy"',
    });
    expect(await state.changed(dry, 'kept', 'new')).toBe(true);
    expect(await state.changed(dry, 'kept', 'old')).toBe(false);
    expect(await state.clear(dry, 'kept')).toMatchObject({ changed: false, would_change: true });
    expect(await state.clear(dry, 'absent')).toMatchObject({
      would_change: false,
      note: 'dry-run: "absent" in workflow "deploy" already has no value',
    });
    expect(await state.get(dry, 'kept')).toBe('old');
    expect(await state.changed(real, 'kept', 'new')).toBe(true);
  });

  it('names bad arguments', async () => {
    const call = inRun('deploy');
    expect(() => state.get(call, 5)).toThrow('state.get: argument 1 must be a key (a non-empty string), got number');
    expect(() => state.get(call, '')).toThrow(
      'state.get: argument 1 must be a key (a non-empty string), got an empty string',
    );
    expect(() => state.get(call, 'k', { scope: 'run' })).toThrow(
      'state.get: option scope must be "workflow", "task" or "global", got "run"',
    );
    expect(() => state.get(call, 'k', { scop: 'task' })).toThrow('state.get: unknown option "scop" (known: scope)');
    expect(() => state.keys(call, 'global')).toThrow('state.keys: argument 1 must be a table of options, got string');
    const fn = { kind: 'lua-function', call: async () => [] };
    await expect(state.set(call, 'k', { hooks: { on_change: fn } })).rejects.toThrow(
      'state.set: argument 2.hooks.on_change is a function; only strings, numbers, booleans and tables can be stored',
    );
    await expect(state.changed(call, 'k', [1, NaN])).rejects.toThrow('state.changed: argument 2[2] is NaN');
    await expect(state.set(call, 'k', 'x'.repeat(MAX_VALUE_BYTES))).rejects.toThrow(
      `state.set: value is ${MAX_VALUE_BYTES + 2} bytes as JSON (at most ${MAX_VALUE_BYTES})`,
    );
    expect(await state.get(call, 'k')).toBeNull();
  });
});
