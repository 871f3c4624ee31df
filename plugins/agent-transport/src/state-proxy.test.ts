// state.* of delegated tasks over a real gRPC stream: a real master with the state service over a
// real store, and real agent clients whose tasks forward their calls with StateCalls.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StateServiceRef,
  type DelegatedTask,
  type StateAnswer,
  type StateRequest,
  type StateService,
} from '@runner/plugin-sdk';
import { setUpLuaModules } from '@runner/plugin-sdk/testing';
import { StateCalls, type AgentClient } from '@runner/plugin-agent/client';
import { plugin as moduleState } from '@runner/plugin-module-state';
import { plugin as storePlugin } from '@runner/plugin-store';
import type { TaskResponse } from '@runner/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { registered, startClient, startMaster, type TestMaster } from './test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The master's state service: module-state over a real store in a temporary data directory. */
async function storeState(): Promise<StateService> {
  const { kernel } = await setUpLuaModules([storePlugin, moduleState], [], mkdtempSync(join(tmpdir(), 'state-proxy-')));
  cleanups.push(() => kernel.stop());
  return kernel.get(StateServiceRef);
}

async function master(state: StateService): Promise<TestMaster> {
  // Liveness is not under test here: a loaded machine must not give an agent up mid-task.
  const m = await startMaster({ state, config: { heartbeatTimeoutMs: 15_000 } });
  cleanups.push(() => m.master.close());
  return m;
}

type Step = (state: StateCalls, run: { runId: string; task: string }) => Promise<unknown>;

/**
 * An agent whose task runs `step` with its StateCalls (as module-state would) and returns what the
 * step gave (or its error) as outputs.
 */
function agent(m: TestMaster, name: string, step: Step, timeoutMs = 5000): { client: AgentClient; calls: StateCalls } {
  // The closure reads `client` once the client is registered, never before it exists.
  const calls = new StateCalls({ master: m.address, timeoutMs, send: (message) => client.send(message) });
  const client: AgentClient = startClient(m.address, name, {
    masterCalls: calls,
    handlers: {
      runTask: async (request): Promise<TaskResponse> => {
        const outcome = await step(calls, { runId: request.run_id, task: request.task }).then(
          (value) => ({ value }),
          (error: Error & { code?: string }) => ({ error: error.message, code: error.code }),
        );
        return { success: true, outputs_json: JSON.stringify(outcome) };
      },
    },
  });
  cleanups.push(() => client.stop());
  return { client, calls };
}

function task(overrides: Partial<DelegatedTask> = {}): DelegatedTask {
  return {
    runId: 'run-1',
    workflowName: 'deploy',
    task: 'render',
    unit: 'render',
    script: 'return true',
    globals: {},
    dryRun: false,
    attempt: 1,
    ...overrides,
  };
}

async function delegate(m: TestMaster, name: string, t: DelegatedTask = task()) {
  const result = await m.master.delegator.execute(name, t, { signal: new AbortController().signal, onLog: () => {} });
  return result.outputs as { value?: unknown; error?: string; code?: string };
}

const set = (key: string, value: unknown, scope: StateRequest['scope'] = 'workflow'): StateRequest => ({
  operation: 'set',
  scope,
  key,
  value: value as StateRequest['value'],
});

describe('state of delegated tasks', () => {
  it("runs on the master's store in the delegated run's workflow and task scopes", async () => {
    const state = await storeState();
    const m = await master(state);
    agent(m, 'web-1', async (calls, run) => {
      const answers: StateAnswer[] = [];
      answers.push(await calls.forward({ operation: 'changed', scope: 'workflow', key: 'cfg', value: { a: 1 } }, run));
      answers.push(await calls.forward({ operation: 'changed', scope: 'workflow', key: 'cfg', value: { a: 1 } }, run));
      answers.push(await calls.forward(set('hosts', ['web-1'], 'task'), run));
      answers.push(await calls.forward({ operation: 'get', scope: 'workflow', key: 'cfg' }, run));
      answers.push(await calls.forward({ operation: 'keys', scope: 'task', key: '' }, run));
      answers.push(await calls.forward({ operation: 'get', scope: 'global', key: 'absent' }, run));
      return answers;
    });
    await m.status('web-1', 'online');
    expect((await delegate(m, 'web-1')).value).toEqual([
      { value: null, keys: [], changed: true },
      { value: null, keys: [], changed: false },
      { value: null, keys: [], changed: true },
      { value: { a: 1 }, keys: [], changed: false },
      { value: null, keys: ['hosts'], changed: false },
      { value: null, keys: [], changed: false },
    ]);
    // The master's own view: workflow "deploy", task "render", from its record of the delegation.
    const here = { workflow: 'deploy', task: 'render', dryRun: false };
    expect(await state.perform({ operation: 'get', scope: 'workflow', key: 'cfg' }, here)).toEqual({ value: { a: 1 } });
    expect(await state.perform({ operation: 'get', scope: 'task', key: 'hosts' }, here)).toEqual({ value: ['web-1'] });
    const other = { ...here, workflow: 'backup' };
    expect(await state.perform({ operation: 'get', scope: 'workflow', key: 'cfg' }, other)).toEqual({ value: null });
  });

  it('writes nothing for a dry-run delegation, whatever the agent does, and still compares', async () => {
    const state = await storeState();
    const m = await master(state);
    agent(m, 'web-1', async (calls, run) => calls.forward(set('version', 'v2'), run));
    await m.status('web-1', 'online');
    expect((await delegate(m, 'web-1', task({ dryRun: true }))).value).toMatchObject({ changed: true });
    const here = { workflow: 'deploy', task: 'render', dryRun: false };
    expect(await state.perform({ operation: 'get', scope: 'workflow', key: 'version' }, here)).toEqual({
      value: null,
    });
  });

  it('refuses another run, another task, and a task that is not running, and logs the refusal', async () => {
    const state = await storeState();
    const m = await master(state);
    // web-2 runs run-2 meanwhile: web-1 must not reach it, nor a run nobody runs.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    agent(m, 'web-2', async () => held);
    const web1 = agent(m, 'web-1', async (calls, run) => {
      const tries = [
        { ...run, runId: 'run-2' },
        { ...run, runId: 'run-404' },
        { ...run, task: 'restart' },
      ];
      const refused = (e: Error & { code: string }) => ({ code: e.code, message: e.message });
      return Promise.all(tries.map((t) => calls.forward(set('x', 1), t).catch(refused)));
    });
    await m.status('web-1', 'online');
    await m.status('web-2', 'online');
    const other = delegate(m, 'web-2', task({ runId: 'run-2', workflowName: 'secrets' }));
    const refusals = (await delegate(m, 'web-1')).value as { code: string; message: string }[];
    release();
    await other;
    expect(refusals.map((r) => r.code)).toEqual(['permission_denied', 'permission_denied', 'permission_denied']);
    expect(refusals[0].message).toBe(
      'state.set: task "render" of run run-2 is not running on agent web-1; an agent reaches state only from a task delegated to it, while it runs',
    );
    expect(refusals[2].message).toMatch(/task "restart" of run run-1 is not running on agent web-1/);
    expect(m.recorded.lines.filter((l) => l.message.startsWith('refused a state request of agent web-1'))).toHaveLength(
      3,
    );
    // After its task ended the agent reaches nothing either.
    const late = await web1.calls.forward(set('x', 1), { runId: 'run-1', task: 'render' }).catch((e: Error) => e);
    expect((late as { code: string }).code).toBe('permission_denied');
    expect(
      await state.perform(
        { operation: 'keys', scope: 'workflow', key: '' },
        { workflow: 'secrets', task: '', dryRun: false },
      ),
    ).toEqual({ keys: [] });
  });

  it('a task fanned out to two agents: state.changed on one key is true on exactly one of them', async () => {
    const m = await master(await storeState());
    for (const name of ['web-1', 'web-2']) {
      agent(m, name, async (calls, run) =>
        calls.forward({ operation: 'changed', scope: 'workflow', key: 'release', value: 'v7' }, run),
      );
    }
    await m.status('web-1', 'online');
    await m.status('web-2', 'online');
    const answers = await Promise.all(['web-1', 'web-2'].map((name) => delegate(m, name)));
    expect(answers.map((a) => (a.value as StateAnswer).changed).sort()).toEqual([false, true]);
  });

  it('pairs each answer with its call when many are in flight and answered out of order', async () => {
    const real = await storeState();
    // Answers leave in another order than the calls came: each waits a different time.
    let n = 0;
    const shuffled: StateService = {
      perform: async (...args) => {
        await new Promise((resolve) => setTimeout(resolve, (n++ * 7) % 23));
        return real.perform(...args);
      },
    };
    const m = await master(shuffled);
    agent(m, 'web-1', async (calls, run) => {
      const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
      await Promise.all(keys.map((k, i) => calls.forward(set(k, i), run)));
      return Promise.all(keys.map((k) => calls.forward({ operation: 'get', scope: 'workflow', key: k }, run)));
    });
    await m.status('web-1', 'online');
    const answers = (await delegate(m, 'web-1')).value as StateAnswer[];
    expect(answers.map((a) => a.value)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it("passes on the master's checks of what came over the wire", async () => {
    const m = await master(await storeState());
    agent(m, 'web-1', async (calls, run) =>
      calls.forward({ operation: 'set', scope: 'everywhere' as 'global', key: 'k', value: 1 }, run),
    );
    await m.status('web-1', 'online');
    expect(await delegate(m, 'web-1')).toMatchObject({
      code: 'invalid_input',
      error: 'state.set: option scope must be "workflow", "task" or "global", got "everywhere"',
    });
  });
});

describe('StateCalls on the agent', () => {
  /** A master whose state answers only when released: the call stays in flight meanwhile. */
  async function slowState(): Promise<{ state: StateService; release(): void }> {
    const real = await storeState();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    return { state: { perform: async (...args) => gate.then(() => real.perform(...args)) }, release };
  }

  it('fails at once, saying so, when the connection to the master drops during a call', async () => {
    const slow = await slowState();
    const m = await master(slow.state);
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    // A state timeout no test waits for: only the dropped connection can end the call.
    const { calls } = agent(
      m,
      'web-1',
      async (c, run) => {
        const answer = c.forward(set('k', 1), run);
        started();
        return answer;
      },
      600_000,
    );
    await m.status('web-1', 'online');
    const outcome = delegate(m, 'web-1').catch((error: Error) => error);
    await inFlight;
    const lost = calls.forward(set('k', 2), { runId: 'run-1', task: 'render' }).catch((e: Error) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await m.master.close();
    const error = (await lost) as Error & { code: string };
    expect(error.code).toBe('master_lost');
    expect(error.message).toMatch(
      /^state\.set: the connection to the master 127\.0\.0\.1:\d+ ended before it answered/,
    );
    expect(calls.inFlight).toBe(0);
    slow.release();
    await outcome;
  });

  it('times out a call the master does not answer, and refuses one while not connected', async () => {
    const slow = await slowState();
    const m = await master(slow.state);
    const { calls, client } = agent(m, 'web-1', async (c, run) => c.forward(set('k', 1), run), 300);
    await m.status('web-1', 'online');
    expect(await delegate(m, 'web-1')).toMatchObject({
      code: 'master_timeout',
      error: expect.stringMatching(
        /^state\.set: no answer from the master 127\.0\.0\.1:\d+ within 300ms \(agent\.state_timeout\); whether it took effect there is unknown$/,
      ),
    });
    expect(calls.inFlight).toBe(0);
    slow.release();
    await client.stop();
    const refused = (await calls
      .forward(set('k', 1), { runId: 'run-1', task: 'render' })
      .catch((e: unknown) => e)) as Error & {
      code: string;
    };
    expect(refused.code).toBe('master_unreachable');
    expect(refused.message).toMatch(/not connected to the master .* nothing was stored/);
  });

  it('stops waiting when the task is cancelled', async () => {
    const slow = await slowState();
    const m = await master(slow.state);
    const { calls, client } = agent(m, 'web-1', async () => true);
    await registered(client);
    const controller = new AbortController();
    const pending = calls
      .forward(set('k', 1), { runId: 'run-1', task: 'render' }, controller.signal)
      .catch((e: Error) => e);
    controller.abort(new Error('task cancelled'));
    expect(((await pending) as Error).message).toBe('task cancelled');
    expect(calls.inFlight).toBe(0);
    slow.release();
  });
});
