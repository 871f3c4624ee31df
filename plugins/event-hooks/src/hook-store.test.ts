// A hook's stack: kept only when the stacks service knows it, and applied when the queue asks
// which hooks match an event (a hook of a stack fires for that stack's runs alone). On the
// embedded store; the stacks service is a stand-in answering as the stacks plugin's does.
import { InvalidInputError, NotFoundError, type Store } from '@runner/plugin-sdk';
import { storeBackends, type OpenBackend } from '@runner/plugin-store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookStore, hookEvents } from './hook-store.js';

const STACKS = ['prod', 'staging'];
const stacks = {
  check: async (name: string) => {
    if (!STACKS.includes(name))
      throw new NotFoundError(`stack "${name}" does not exist (stacks: ${STACKS.join(', ')})`);
  },
};

describe('HookStore: hooks of a stack', () => {
  const backend = storeBackends('hook_store')[0];
  let opened: OpenBackend;
  let store: Store;
  let hooks: HookStore;

  beforeAll(async () => {
    opened = await backend.open();
    store = opened.store;
    const stored = ['task.started', 'task.completed', 'task.failed', 'agent.connected'];
    const events = hookEvents(stored.map((name) => ({ name, description: name })));
    hooks = new HookStore(
      store,
      () => {},
      () => {},
      events,
      stacks,
    );
    await hooks.open();
    await hooks.create({ name: 'everywhere', event_type: 'task.*', script: 'return true', priority: 1 });
    await hooks.create({ name: 'prod-only', event_type: 'task.failed', script: 'return true', stack: 'prod' });
    await hooks.create({ name: 'staging-all', event_type: '*', script: 'return true', stack: 'staging' });
  });
  afterAll(async () => {
    await opened?.close();
    backend.cleanup();
  });

  const names = (type: string, stack?: string) => hooks.matching(type, stack).map((h) => h.name);

  it('fires a hook with a stack only for events of its stack, and one without for all', () => {
    expect(names('task.failed', 'prod')).toEqual(['everywhere', 'prod-only']);
    expect(names('task.failed', 'staging')).toEqual(['everywhere', 'staging-all']);
    expect(names('task.failed')).toEqual(['everywhere']);
    expect(names('task.failed', 'dev')).toEqual(['everywhere']);
    // Agent events carry no stack: a stack's hook on `*` does not fire on them.
    expect(names('agent.connected')).toEqual([]);
  });

  it("takes the event names and patterns of the queue's stored types, and refuses others", async () => {
    expect(hooks.events.map((e) => e.name)).toEqual([
      'task.started',
      'task.completed',
      'task.failed',
      'agent.connected',
      'task.*',
      'agent.*',
      '*',
    ]);
    await expect(hooks.create({ name: 'wf', event_type: 'workflow.failed', script: 'return true' })).rejects.toThrow(
      /"workflow.failed" is not a hook event.*use one of task.started, .*\*/,
    );
  });

  it('refuses a stack that does not exist, on the stack field, at create and at update', async () => {
    const created = hooks.create({ name: 'typo', event_type: 'task.failed', script: 'return true', stack: 'prdo' });
    await expect(created).rejects.toBeInstanceOf(InvalidInputError);
    await expect(created).rejects.toMatchObject({
      details: { field: 'stack' },
      message: 'stack: stack "prdo" does not exist (stacks: prod, staging)',
    });
    await expect(hooks.update('prod-only', { stack: 'nope' })).rejects.toMatchObject({ details: { field: 'stack' } });
    expect((await hooks.get('prod-only')).stack).toBe('prod');
    expect((await hooks.list()).map((h) => h.name)).not.toContain('typo');
  });

  it('applies a stack changed by an update at once, and a stack removed (null) matches all again', async () => {
    await hooks.update('prod-only', { stack: 'staging' });
    expect(names('task.failed', 'prod')).toEqual(['everywhere']);
    expect(names('task.failed', 'staging')).toEqual(['everywhere', 'prod-only', 'staging-all']);
    await hooks.update('prod-only', { stack: null });
    expect(names('task.failed', 'prod')).toEqual(['everywhere', 'prod-only']);
  });
});
