// The executor's side of the door, with a real Lua runtime and the log module. The channel is an
// in-process EventEmitter standing for Node's IPC channel (the real one is exercised end to end by
// test/e2e/run-as.test.ts, where a master starts this process as runner-exec).
import { EventEmitter } from 'node:events';
import {
  LuaRuntimeRef,
  luaLazyTable,
  toExecutorError,
  RunnerError,
  type ExecutorTask,
  type ExecutorToMaster,
  type LuaValue,
  type MasterToExecutor,
} from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleLog } from '@runner/plugin-modules-script';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExecutorServer } from './serve.js';

let kernel: TestKernel;
beforeAll(async () => {
  kernel = await createTestKernel({ plugins: [luaRuntime, moduleLog], profile: 'executor' });
});
afterAll(() => kernel.stop());

class Channel extends EventEmitter {
  readonly sent: ExecutorToMaster[] = [];
  send(message: ExecutorToMaster): boolean {
    this.sent.push(structuredClone(message));
    this.emit('sent', message);
    return true;
  }
  deliver(message: MasterToExecutor): void {
    this.emit('message', structuredClone(message));
  }
  next(predicate: (m: ExecutorToMaster) => boolean): Promise<ExecutorToMaster> {
    const found = this.sent.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const on = (m: ExecutorToMaster) => {
        if (!predicate(m)) return;
        this.off('sent', on);
        resolve(m);
      };
      this.on('sent', on);
    });
  }
}

function task(id: number, source: string, extra: Partial<ExecutorTask> = {}): ExecutorTask {
  return {
    id,
    source,
    chunkName: '=t',
    globals: { vars: { who: 'me' }, tasks: luaLazyTable({ first: { outputs: { n: 1 } } }) as unknown as LuaValue },
    dryRun: false,
    run: { workflow: 'wf', runId: 'r1', task: 't', attempt: 1, agent: 'localhost' },
    ...extra,
  };
}

function serve(): { channel: Channel; server: ExecutorServer; served: Promise<void> } {
  const channel = new Channel();
  const server = new ExecutorServer(kernel.get(LuaRuntimeRef), channel);
  return { channel, server, served: server.serve() };
}

it('says it is ready, runs a task with its globals (lazy tables too), streams its log and answers its values', async () => {
  const { channel } = serve();
  expect(channel.sent[0]).toMatchObject({ type: 'ready', pid: process.pid });
  channel.deliver({
    type: 'run',
    task: task(1, 'log.info("hi " .. vars.who) return true, "n=" .. tasks.first.outputs.n'),
  });
  const done = await channel.next((m) => m.type === 'done' && m.id === 1);
  expect(done).toEqual({ type: 'done', id: 1, values: [true, 'n=1'] });
  expect(channel.sent).toContainEqual(expect.objectContaining({ type: 'log', id: 1, level: 'info', message: 'hi me' }));
});

it("answers a script's error with its code and line", async () => {
  const { channel } = serve();
  channel.deliver({ type: 'run', task: task(2, 'local x = nil\nreturn x.y') });
  const done = (await channel.next((m) => m.type === 'done' && m.id === 2)) as Extract<
    ExecutorToMaster,
    { type: 'done' }
  >;
  expect(done.error).toMatchObject({ code: 'lua_error', details: expect.objectContaining({ line: 2 }) });
  expect(done.error?.message).toMatch(/attempt to index a nil value/);
});

it('stops a task the master cancels, with the reason the master gave', async () => {
  const { channel } = serve();
  channel.deliver({ type: 'run', task: task(3, 'while true do end') });
  channel.deliver({
    type: 'cancel',
    id: 3,
    reason: toExecutorError(new RunnerError('cancelled', 'cancelled: by alice', { status: 409 })),
  });
  const done = (await channel.next((m) => m.type === 'done' && m.id === 3)) as Extract<
    ExecutorToMaster,
    { type: 'done' }
  >;
  expect(done.error).toMatchObject({ code: 'cancelled', message: expect.stringContaining('cancelled: by alice') });
});

it("forwards state.* and other module calls to the master for a running task, and the master's answer comes back", async () => {
  const { channel, server } = serve();
  channel.deliver({ type: 'run', task: task(4, 'while true do end') });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const answer = server.forward({ operation: 'get', scope: 'workflow', key: 'k' }, { runId: 'r1', task: 't' });
  const asked = (await channel.next((m) => m.type === 'call')) as Extract<ExecutorToMaster, { type: 'call' }>;
  expect(asked).toMatchObject({ id: 4, module: 'state', request: { operation: 'get', key: 'k' } });
  channel.deliver({ type: 'call-result', callId: asked.callId, answer: { value: 'v' } });
  await expect(answer).resolves.toEqual({ value: 'v' });
  // Any other module's call goes the same way; the master's error comes back with its code.
  const other = server.calls.forward('ssh', { fn: 'exec' }, { runId: 'r1', task: 't' });
  const sent = (await channel.next((m) => m.type === 'call' && m.module === 'ssh')) as Extract<
    ExecutorToMaster,
    { type: 'call' }
  >;
  channel.deliver({
    type: 'call-result',
    callId: sent.callId,
    error: { code: 'forbidden', message: 'no', status: 403 },
  });
  await expect(other).rejects.toMatchObject({ code: 'forbidden', message: 'no' });
  await expect(
    server.forward({ operation: 'get', scope: 'workflow', key: 'k' }, { runId: 'other', task: 't' }),
  ).rejects.toThrow(/no such task running/);
  channel.deliver({ type: 'cancel', id: 4, reason: { code: 'cancelled', message: 'done', status: 409 } });
  await channel.next((m) => m.type === 'done' && m.id === 4);
});

it('when the channel closes (the master ended), stops every task and ends serving', async () => {
  const { channel, served } = serve();
  channel.deliver({ type: 'run', task: task(5, 'while true do end') });
  await new Promise((resolve) => setTimeout(resolve, 20));
  channel.emit('disconnect');
  await served;
  const done = (await channel.next((m) => m.type === 'done' && m.id === 5)) as Extract<
    ExecutorToMaster,
    { type: 'done' }
  >;
  expect(done.error?.message).toMatch(/the master ended its local executor/);
});

it('ends at once when the master ended before it began serving (the channel already closed)', async () => {
  const channel = Object.assign(new Channel(), { connected: false });
  await new ExecutorServer(kernel.get(LuaRuntimeRef), channel).serve();
  expect(channel.sent).toEqual([]);
});

it("sends a task's log up to its logBytes and one line past them, then only counts: a flood costs the master nothing more", async () => {
  const { channel } = serve();
  channel.deliver({ type: 'run', task: task(6, 'for i = 1, 100000 do print("line " .. i) end', { logBytes: 2000 }) });
  const done = (await channel.next((m) => m.type === 'done' && m.id === 6)) as Extract<
    ExecutorToMaster,
    { type: 'done' }
  >;
  const lines = channel.sent.filter((m) => m.type === 'log' && m.id === 6);
  expect(lines.length).toBeGreaterThan(20);
  expect(lines.length).toBeLessThan(60);
  expect(lines.length + (done.droppedLogLines ?? 0)).toBe(100_000);
});
