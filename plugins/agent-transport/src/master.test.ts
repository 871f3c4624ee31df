// The master side against real agent clients over a real gRPC connection on loopback.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { isRunnerError, type DelegatedTask, type TaskLogLine } from '@runner/plugin-sdk';
import { openStore } from '@runner/plugin-store';
import { loadRunnerProto, type AgentMessage, type MasterClient, type MasterMessage__Output } from '@runner/proto';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentClient } from '@runner/plugin-agent/client';
import { recordingLogger, registered, startClient, startMaster, TOKEN, type TestMaster } from './test-support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function master(options: Parameters<typeof startMaster>[0] = {}): Promise<TestMaster> {
  const m = await startMaster(options);
  cleanups.push(() => m.master.close());
  return m;
}

function client(address: string, name: string, options: Parameters<typeof startClient>[2] = {}): AgentClient {
  const c = startClient(address, name, options);
  cleanups.push(() => c.stop());
  return c;
}

function task(overrides: Partial<DelegatedTask> = {}): DelegatedTask {
  return {
    runId: 'run-1',
    workflowName: 'wf',
    task: 'greet',
    unit: 'greet',
    script: 'return true',
    globals: { vars: { app: 'web' } },
    dryRun: false,
    attempt: 1,
    ...overrides,
  };
}

/** A raw Connect stream, for what a well-behaved client never does. */
function rawStream(address: string, token?: string) {
  const proto = loadRunnerProto().runner.v1;
  const raw = new proto.Master(address, grpc.credentials.createInsecure()) as unknown as MasterClient;
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const stream = raw.Connect(metadata);
  const received: MasterMessage__Output[] = [];
  stream.on('data', (m: MasterMessage__Output) => received.push(m));
  const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
  stream.on('error', () => {});
  cleanups.push(() => {
    stream.cancel();
    raw.close();
  });
  const register = (name: string): AgentMessage => ({
    register: {
      protocol_version: 1,
      name,
      version: 'raw',
      hostname: 'h',
      os: 'o',
      labels: {},
      modules: [],
      pid: 1,
      uptime: 0,
    },
  });
  return { stream, received, status, register };
}

describe('registration', () => {
  it('registers an agent: the registry lists it online, agent.connected is emitted, the agent learns the intervals', async () => {
    const m = await master();
    const c = client(m.address, 'web-1', { labels: { zone: 'a' } });
    await registered(c);
    const event = await m.event('agent.connected', 'web-1');
    expect(event).toEqual({
      agent_name: 'web-1',
      address: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      status: 'online',
    });
    const agent = m.master.registry.get('web-1');
    expect(agent).toMatchObject({
      name: 'web-1',
      status: 'online',
      hostname: 'test-host',
      os: 'linux test',
      version: '0.0.0-test',
      modules: ['exec', 'log'],
      labels: { zone: 'a' },
    });
    expect(new Date(agent!.last_heartbeat).toISOString()).toBe(agent!.last_heartbeat);
    expect(m.master.registry.list().map((a) => a.name)).toEqual(['web-1']);
    expect(c.session).toMatchObject({ heartbeatIntervalMs: 100, heartbeatTimeoutMs: 600 });
    expect(m.master.delegator.agent('web-1')).toMatchObject({
      name: 'web-1',
      status: 'online',
      cpu_usage: expect.any(Number),
      labels: { zone: 'a' },
    });
    expect(m.master.delegator.isAvailable('web-1')).toBe(true);
    expect(m.master.delegator.agent('nobody')).toBeUndefined();
  });

  it.each([
    ['a wrong token', 'rjt_wrong', /wrong join token/],
    ['no token', undefined, /no join token presented/],
  ])('refuses %s on both sides and registers nothing', async (_what, token, message) => {
    const m = await master();
    const lines: { level: string; message: string }[] = [];
    const c = client(m.address, 'intruder', { token, lines });
    const outcome = await c.finished;
    expect(outcome).toMatchObject({ kind: 'refused', code: grpc.status.UNAUTHENTICATED });
    expect((outcome as { message: string }).message).toMatch(message);
    expect((outcome as { message: string }).message).toMatch(/refused agent intruder/);
    expect(m.master.registry.list()).toEqual([]);
    expect(m.recorded.events).toEqual([]);
    expect(m.recorded.lines.find((l) => l.level === 'warn')?.message).toMatch(
      new RegExp(`refused agent intruder from 127\\.0\\.0\\.1:\\d+: ${message.source}`),
    );
  });

  it('reads the token file again when it changes (token create --force needs no master restart)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-token-'));
    const { createTokenFile } = await import('./token.js');
    const first = createTokenFile(dir);
    const m = await master({ tokenFile: first.path });
    await registered(client(m.address, 'a1', { token: first.token }));
    await new Promise((r) => setTimeout(r, 20));
    const second = createTokenFile(dir, { force: true });
    expect((await client(m.address, 'a2', { token: first.token }).finished).kind).toBe('refused');
    await registered(client(m.address, 'a3', { token: second.token }));
  });

  it('refuses a bad name, a bad protocol version and a stream that does not register', async () => {
    const m = await master({ config: { registerTimeoutMs: 200 } });
    const badName = rawStream(m.address, TOKEN);
    badName.stream.write(badName.register('no spaces allowed'));
    expect(await badName.status).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/not valid/),
    });

    const oldProtocol = rawStream(m.address, TOKEN);
    const message = oldProtocol.register('old');
    message.register!.protocol_version = 99;
    oldProtocol.stream.write(message);
    expect(await oldProtocol.status).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: expect.stringMatching(/protocol version 99/),
    });

    const silent = rawStream(m.address, TOKEN);
    expect(await silent.status).toMatchObject({
      code: grpc.status.DEADLINE_EXCEEDED,
      details: expect.stringMatching(/no register message/),
    });
    expect(m.master.registry.list()).toEqual([]);
  });

  it("enrols an agent at its first registration, and its credential's reconnection replaces its own stale session", async () => {
    const m = await master();
    const issued: string[] = [];
    const first = client(m.address, 'dup', { onCredential: (c) => issued.push(c) });
    await registered(first);
    expect(issued).toEqual([expect.stringMatching(/^rac_/)]);
    expect(m.master.registry.get('dup')).toMatchObject({ enrolled_at: expect.any(String), revoked_at: null });
    // The master logs the enrolment, never the credential.
    expect(JSON.stringify(m.recorded.lines)).not.toContain(issued[0]);
    expect(m.recorded.lines.map((l) => l.message)).toContainEqual(
      expect.stringMatching(/agent dup connected .*enrolled/),
    );

    // The same agent after a network blip (its old stream half dead) connects with its credential
    // and no join token at all: it wins, and the old stream is told not to reconnect.
    const again = client(m.address, 'dup', { token: undefined, credential: issued[0] });
    await registered(again);
    expect(await first.finished).toMatchObject({
      kind: 'dismissed',
      message: expect.stringMatching(/replaced this one/),
    });
    expect(m.master.registry.get('dup')?.status).toBe('online');
    expect(m.recorded.events.filter((e) => e.type === 'agent.disconnected')).toEqual([]);
  });

  it('a second agent with the join token cannot take the name of a live enrolled agent (ALREADY_EXISTS)', async () => {
    const m = await master();
    const owner = client(m.address, 'web-1');
    await registered(owner);
    const intruder = client(m.address, 'web-1');
    expect(await intruder.finished).toMatchObject({
      kind: 'refused',
      code: grpc.status.ALREADY_EXISTS,
      message: expect.stringMatching(/refused agent web-1: agent web-1 is connected \(from 127\.0\.0\.1:\d+\)/),
    });
    // A forged credential fares no better, and the owner keeps its session throughout.
    const forger = client(m.address, 'web-1', { credential: 'rac_forged' });
    expect(await forger.finished).toMatchObject({ kind: 'refused', code: grpc.status.UNAUTHENTICATED });
    expect(owner.state).toBe('registered');
    expect(m.master.registry.get('web-1')?.status).toBe('online');
  });
});

describe('heartbeats and liveness', () => {
  it('heartbeats carry usage; a resource above the threshold makes the agent warning, and back', async () => {
    const m = await master();
    let usage = { cpu_percent: 10, memory_percent: 20, disk_percent: 30, uptime: 7 };
    client(m.address, 'busy', { handlers: { usage: () => usage } });
    await m.status('busy', 'online');
    usage = { ...usage, memory_percent: 93.44 };
    const warning = await m.status('busy', 'warning');
    expect(warning).toMatchObject({ memory_usage: 93.4, cpu_usage: 10, uptime: 7 });
    expect(m.recorded.lines.some((l) => /agent busy is warning: memory at 93.4% \(above 80%\)/.test(l.message))).toBe(
      true,
    );
    // Back under the threshold by less than its margin: still warning (no flip at each beat).
    usage = { ...usage, memory_percent: 78 };
    await new Promise<void>((resolve) => {
      const off = m.master.registry.onChange((agent) => {
        if (agent.name !== 'busy' || agent.memory_usage !== 78) return;
        off();
        resolve();
      });
    });
    expect(m.master.registry.get('busy')?.status).toBe('warning');
    // Well below, but for one beat: still warning; online once it held for three beats in a row.
    usage = { ...usage, memory_percent: 50 };
    const firstCalmBeat = await new Promise<string | undefined>((resolve) => {
      const off = m.master.registry.onChange((agent) => {
        if (agent.name !== 'busy' || agent.memory_usage !== 50) return;
        off();
        resolve(agent.status);
      });
    });
    expect(firstCalmBeat).toBe('warning');
    await m.status('busy', 'online');
    // Hooks and the event queue hear of each change (connected and disconnected say the rest).
    expect(m.recorded.events.filter((e) => e.type === 'agent.status_changed').map((e) => e.data)).toEqual([
      expect.objectContaining({
        agent_name: 'busy',
        status: 'warning',
        previous_status: 'online',
        reason: 'memory at 93.4% (above 80%)',
      }),
      expect.objectContaining({
        agent_name: 'busy',
        status: 'online',
        previous_status: 'warning',
        reason: 'back to normal',
      }),
    ]);
  });

  it('an agent reporting an error has status error', async () => {
    const m = await master();
    client(m.address, 'sick', {
      handlers: {
        usage: () => ({
          cpu_percent: 1,
          memory_percent: 1,
          disk_percent: 1,
          uptime: 1,
          error: 'lua runtime unavailable',
        }),
      },
    });
    expect(await m.status('sick', 'error')).toMatchObject({ name: 'sick' });
  });

  it('marks a silent agent offline after the heartbeat timeout, and at once when its stream closes', async () => {
    const m = await master();
    const silent = rawStream(m.address, TOKEN);
    silent.stream.write(silent.register('silent'));
    await m.status('silent', 'online');
    const started = Date.now();
    const event = await m.event('agent.disconnected', 'silent');
    const elapsed = Date.now() - started;
    expect(event).toMatchObject({ agent_name: 'silent', status: 'offline' });
    // Not before the timeout; the ceiling only says it happened (a busy machine delays timers).
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(10_000);
    expect(m.master.registry.get('silent')?.status).toBe('offline');
    expect(m.master.delegator.isAvailable('silent')).toBe(false);
    expect(m.recorded.lines.some((l) => /agent silent disconnected: no heartbeat for/.test(l.message))).toBe(true);

    const closing = rawStream(m.address, TOKEN);
    closing.stream.write(closing.register('closing'));
    await m.status('closing', 'online');
    closing.stream.cancel();
    await m.event('agent.disconnected', 'closing');
    // At once: the closed stream ended it, not the heartbeat timeout (the log names the cause).
    const closed = m.recorded.lines.filter((l) => l.message.startsWith('agent closing disconnected: '));
    expect(closed).toHaveLength(1);
    expect(closed[0].message).not.toMatch(/no heartbeat/);
  });

  it('says an agent stopped answering when its connection drops after a silence, not that it closed it', async () => {
    const m = await master();
    const frozen = rawStream(m.address, TOKEN);
    frozen.stream.write(frozen.register('frozen'));
    await m.status('frozen', 'online');
    // Silent for two heartbeat intervals (100 ms in these tests), under the 600 ms timeout; then
    // the connection goes, as gRPC's keepalive drops the one of a stopped process.
    await new Promise((resolve) => setTimeout(resolve, 250));
    frozen.stream.cancel();
    await m.event('agent.disconnected', 'frozen');
    const line = m.recorded.lines.find((l) => /agent frozen disconnected/.test(l.message))?.message;
    expect(line).toMatch(
      /^agent frozen disconnected: the agent stopped answering \(nothing from it for \d+ ms\), then its connection ended$/,
    );
  });

  it('an agent whose master stops answering gives it up after the heartbeat timeout and reconnects', async () => {
    // A master that registers agents and then never answers a heartbeat (frozen, or the path to
    // it silently gone).
    const proto = loadRunnerProto().runner.v1;
    const server = new grpc.Server();
    let connections = 0;
    server.addService(proto.Master.service, {
      Connect: (call: grpc.ServerDuplexStream<AgentMessage, unknown>) => {
        connections++;
        call.once('data', () =>
          call.write({
            registered: { master_version: 'x', heartbeat_interval: 0.05, heartbeat_timeout: 0.3, address: 'a' },
          }),
        );
        call.on('error', () => {});
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    cleanups.push(() => void server.forceShutdown());
    const lines: { level: string; message: string }[] = [];
    client(`127.0.0.1:${port}`, 'watchful', { lines });
    await expect.poll(() => connections, { timeout: 3000 }).toBeGreaterThanOrEqual(2);
    expect(lines.some((l) => /lost the master .*no answer from the master for/.test(l.message))).toBe(true);
  });
});

describe('delegation', () => {
  it('runs a task: script and globals reach the agent, the result and outputs come back', async () => {
    const m = await master();
    let seen: Record<string, unknown> = {};
    client(m.address, 'web-1', {
      handlers: {
        runTask: async (request) => {
          seen = { ...request, globals: JSON.parse(request.globals_json) };
          return { success: true, message: 'done', outputs_json: JSON.stringify({ artifact: 'web.tgz', n: 3 }) };
        },
      },
    });
    await m.status('web-1', 'online');
    const result = await m.master.delegator.execute(
      'web-1',
      task({ timeoutMs: 5000, attempt: 2, memoryLimitBytes: 128 * 1024 * 1024 }),
      { signal: new AbortController().signal, onLog: () => {} },
    );
    expect(result).toEqual({ success: true, message: 'done', outputs: { artifact: 'web.tgz', n: 3 } });
    expect(seen).toMatchObject({
      run_id: 'run-1',
      workflow: 'wf',
      task: 'greet',
      unit: 'greet',
      script: 'return true',
      globals: { vars: { app: 'web' } },
      timeout_ms: 5000,
      attempt: 2,
      dry_run: false,
      memory_limit_mib: 128,
    });
    // A workflow without memory_limit: sends 0, which the agent reads as its own default.
    await m.master.delegator.execute('web-1', task(), { signal: new AbortController().signal, onLog: () => {} });
    expect(seen).toMatchObject({ timeout_ms: 0, memory_limit_mib: 0 });
  });

  it('a failed task is a result, not an error', async () => {
    const m = await master();
    client(m.address, 'web-1', { handlers: { runTask: async () => ({ success: false, message: 'boom' }) } });
    await m.status('web-1', 'online');
    expect(
      await m.master.delegator.execute('web-1', task(), { signal: new AbortController().signal, onLog: () => {} }),
    ).toEqual({
      success: false,
      message: 'boom',
      outputs: undefined,
    });
  });

  it('streams log lines live: they arrive before the task ends', async () => {
    const m = await master();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    client(m.address, 'web-1', {
      handlers: {
        runTask: async (_request, { log }) => {
          log({
            timestamp: new Date().toISOString(),
            level: 'LOG_LEVEL_INFO',
            message: 'step 1',
            fields_json: JSON.stringify({ n: 1 }),
          });
          await gate;
          log({ timestamp: new Date().toISOString(), level: 'LOG_LEVEL_WARN', message: 'step 2' });
          return { success: true };
        },
      },
    });
    await m.status('web-1', 'online');
    const lines: TaskLogLine[] = [];
    let firstLine!: () => void;
    const gotFirst = new Promise<void>((resolve) => (firstLine = resolve));
    const running = m.master.delegator.execute('web-1', task(), {
      signal: new AbortController().signal,
      onLog: (line) => {
        lines.push(line);
        firstLine();
      },
    });
    await gotFirst;
    expect(lines).toEqual([{ timestamp: expect.any(String), level: 'info', message: 'step 1', fields: { n: 1 } }]);
    release();
    await running;
    expect(lines.map((l) => `${l.level}:${l.message}`)).toEqual(['info:step 1', 'warn:step 2']);
  });

  it('an agent lost mid-task fails the task at once with agent_lost; one lost before taking it is agent_unreachable', async () => {
    const m = await master();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const c = client(m.address, 'doomed', {
      handlers: {
        runTask: () => {
          started();
          return new Promise(() => {});
        },
      },
    });
    await m.status('doomed', 'online');
    const execution = m.master.delegator.execute('doomed', task(), {
      signal: new AbortController().signal,
      onLog: () => {},
    });
    await running;
    const before = Date.now();
    void c.stop();
    const error = await execution.catch((e: unknown) => e);
    expect(isRunnerError(error) && error.code).toBe('agent_lost');
    expect((error as Error).message).toMatch(/agent doomed was lost while running the task/);
    // Never hangs: a ceiling far above the heartbeat timeout, not a speed target.
    expect(Date.now() - before).toBeLessThan(10_000);

    const unknown = await m.master.delegator
      .execute('nobody', task(), { signal: new AbortController().signal, onLog: () => {} })
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'not_found' });
    const offline = await m.master.delegator
      .execute('doomed', task(), { signal: new AbortController().signal, onLog: () => {} })
      .catch((e: unknown) => e);
    expect(offline).toMatchObject({ code: 'agent_unreachable', status: 503 });
  });

  it('a silent agent fails its running task within the heartbeat timeout, never hangs', async () => {
    const m = await master();
    const silent = rawStream(m.address, TOKEN);
    silent.stream.write(silent.register('frozen'));
    await m.status('frozen', 'online');
    // Takes the task, then never says anything again.
    silent.stream.on('data', (message: MasterMessage__Output) => {
      if (message.body === 'execute_task') silent.stream.write({ call_id: message.call_id, task_accepted: {} });
    });
    const before = Date.now();
    const error = await m.master.delegator
      .execute('frozen', task(), { signal: new AbortController().signal, onLog: () => {} })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent_lost' });
    // Never hangs: a ceiling far above the heartbeat timeout, not a speed target.
    expect(Date.now() - before).toBeLessThan(10_000);
  });

  it('an agent lost before the start of the handshake leaves the task unrun: agent_unreachable, so failover may move on', async () => {
    const m = await master();
    const raw = rawStream(m.address, TOKEN);
    raw.stream.write(raw.register('shaky'));
    await m.status('shaky', 'online');
    raw.stream.on('data', (message: MasterMessage__Output) => {
      if (message.body === 'execute_task') raw.stream.cancel();
    });
    const error = await m.master.delegator
      .execute('shaky', task(), { signal: new AbortController().signal, onLog: () => {} })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent_unreachable' });
  });

  it('the agent runs a task only after the master said start', async () => {
    const m = await master();
    const raw = rawStream(m.address, TOKEN);
    raw.stream.write(raw.register('careful'));
    await m.status('careful', 'online');
    raw.stream.on('data', (message: MasterMessage__Output) => {
      if (message.body === 'execute_task') raw.stream.write({ call_id: message.call_id, task_accepted: {} });
      if (message.body === 'start_task')
        raw.stream.write({ call_id: message.call_id, task_result: { success: true, message: 'started' } });
    });
    const result = await m.master.delegator.execute('careful', task(), {
      signal: new AbortController().signal,
      onLog: () => {},
    });
    expect(result.message).toBe('started');
    expect(raw.received.map((r) => r.body)).toEqual(['registered', 'execute_task', 'start_task']);
  });

  it('aborting the run cancels the task on the agent', async () => {
    const m = await master();
    let aborted!: (reason: unknown) => void;
    const agentSaw = new Promise((resolve) => (aborted = resolve));
    client(m.address, 'web-1', {
      handlers: {
        runTask: (_request, { signal }) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              aborted(signal.reason);
              resolve({ success: false, message: 'stopped' });
            });
          }),
      },
    });
    await m.status('web-1', 'online');
    const controller = new AbortController();
    const execution = m.master.delegator.execute('web-1', task(), { signal: controller.signal, onLog: () => {} });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new Error('run cancelled'));
    expect(await execution.catch((e: unknown) => e)).toMatchObject({ code: 'cancelled' });
    expect(String(await agentSaw)).toMatch(/run cancelled/);
  });

  it('runs many tasks on one agent concurrently', async () => {
    const m = await master();
    client(m.address, 'web-1', {
      handlers: { runTask: async (request) => ({ success: true, message: JSON.parse(request.globals_json).i }) },
    });
    await m.status('web-1', 'online');
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        m.master.delegator.execute('web-1', task({ globals: { i: String(i) } }), {
          signal: new AbortController().signal,
          onLog: () => {},
        }),
      ),
    );
    expect(results.map((r) => r.message)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
  });
});

describe('the agent registry', () => {
  it('serves metrics, processes, network, disks', async () => {
    const m = await master();
    client(m.address, 'web-1', {
      handlers: {
        metrics: async (request) => ({
          metrics: {
            cpu: { cores: 4, usage_percent: 12.5, load_avg: [1, 2, 3] },
            memory: { total_bytes: 8e9, used_bytes: 2e9, usage_percent: 25 },
            disk: { total_bytes: 1e11, used_bytes: 5e10, usage_percent: 50 },
            network: { rx_bytes_per_sec: 100, tx_bytes_per_sec: 200 },
            processes: 99,
            uptime: 61.9,
            collected_at: '2026-01-01T00:00:00.000Z',
          },
          processes: request.processes
            ? [{ pid: 1, name: 'init', command: '/sbin/init', cpu_percent: 0.1, memory_bytes: 4096, user: 'root' }]
            : [],
          network: request.network
            ? [
                {
                  name: 'eth0',
                  addresses: ['10.0.0.2'],
                  rx_bytes: 5,
                  tx_bytes: 6,
                  rx_bytes_per_sec: 1,
                  tx_bytes_per_sec: 2,
                },
              ]
            : [],
          disks: request.disks
            ? [{ mount: '/', fs_type: 'ext4', total_bytes: 10, used_bytes: 5, usage_percent: 50 }]
            : [],
        }),
      },
    });
    await m.status('web-1', 'online');
    const { registry } = m.master;
    expect(await registry.metrics('web-1')).toEqual({
      cpu: { cores: 4, usage_percent: 12.5, load_avg: [1, 2, 3] },
      memory: { total_bytes: 8e9, used_bytes: 2e9, usage_percent: 25 },
      disk: { total_bytes: 1e11, used_bytes: 5e10, usage_percent: 50 },
      network: { rx_bytes_per_sec: 100, tx_bytes_per_sec: 200 },
      processes: 99,
      uptime: 61,
      collected_at: '2026-01-01T00:00:00.000Z',
    });
    expect(await registry.processes('web-1')).toEqual([
      { pid: 1, name: 'init', command: '/sbin/init', cpu_percent: 0.1, memory_bytes: 4096, user: 'root' },
    ]);
    expect(await registry.network('web-1')).toEqual([
      { name: 'eth0', addresses: ['10.0.0.2'], rx_bytes: 5, tx_bytes: 6, rx_bytes_per_sec: 1, tx_bytes_per_sec: 2 },
    ]);
    expect(await registry.disks('web-1')).toEqual([
      { mount: '/', fs_type: 'ext4', total_bytes: 10, used_bytes: 5, usage_percent: 50 },
    ]);
    await expect(registry.metrics('nobody')).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it('exec passes command, argv, cwd and timeout; a call the agent fails is an error naming the agent', async () => {
    const m = await master();
    const seen: unknown[] = [];
    client(m.address, 'web-1', {
      handlers: {
        exec: async (request) => {
          seen.push({ ...request });
          if (request.command === 'explode') throw Object.assign(new Error('spawn failed'), { code: 'exec_failed' });
          return { stdout: 'hi\n', stderr: '', exit_code: 3, exited: true, timed_out: false, duration: 0.01 };
        },
      },
    });
    await m.status('web-1', 'online');
    expect(await m.master.registry.exec('web-1', 'echo hi', { timeoutMs: 1500, cwd: '/tmp' })).toEqual({
      stdout: 'hi\n',
      stderr: '',
      exit_code: 3,
      timed_out: false,
      duration: 0.01,
    });
    await m.master.registry.exec('web-1', ['ls', '-l']);
    expect(seen).toEqual([
      { command: 'echo hi', argv: [], cwd: '/tmp', timeout_ms: 1500 },
      { command: '', argv: ['ls', '-l'], cwd: '', timeout_ms: 0 },
    ]);
    await expect(m.master.registry.exec('web-1', 'explode')).rejects.toMatchObject({
      code: 'exec_failed',
      message: 'agent web-1: spawn failed',
    });
    await expect(m.master.registry.exec('web-1', '  ')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('restart and stop reach the agent after it answered', async () => {
    const m = await master();
    const actions: string[] = [];
    client(m.address, 'web-1', { handlers: { control: (action) => actions.push(action) } });
    await m.status('web-1', 'online');
    await m.master.registry.restart('web-1');
    await m.master.registry.stop('web-1');
    await expect.poll(() => actions).toEqual(['restart', 'stop']);
  });

  it('streams the agent log: recent lines, then new ones, until aborted', async () => {
    const m = await master();
    const followers = new Set<(entry: { timestamp: string; level: 'LOG_LEVEL_INFO'; message: string }) => void>();
    client(m.address, 'web-1', {
      handlers: {
        logs: (request) => ({
          recent: [
            {
              timestamp: '2026-01-01T00:00:00.000Z',
              level: 'LOG_LEVEL_WARN',
              message: `old (tail ${request.tail})`,
              fields_json: '{"k":"v"}',
            },
          ],
          subscribe: (listener) => {
            followers.add(listener as never);
            return () => followers.delete(listener as never);
          },
        }),
      },
    });
    await m.status('web-1', 'online');
    const controller = new AbortController();
    const entries: unknown[] = [];
    const following = m.master.registry.streamLogs('web-1', (entry) => entries.push(entry), controller.signal);
    await expect.poll(() => followers.size).toBe(1);
    for (const f of followers) f({ timestamp: '2026-01-01T00:00:01.000Z', level: 'LOG_LEVEL_INFO', message: 'new' });
    await expect.poll(() => entries.length).toBe(2);
    controller.abort();
    await following;
    expect(entries).toEqual([
      { timestamp: '2026-01-01T00:00:00.000Z', level: 'WARN', message: 'old (tail 100)  k=v' },
      { timestamp: '2026-01-01T00:00:01.000Z', level: 'INFO', message: 'new' },
    ]);
    await expect.poll(() => followers.size).toBe(0);
  });

  it('a log stream ends with agent_unreachable when the agent goes away', async () => {
    const m = await master();
    const c = client(m.address, 'web-1', { handlers: { logs: () => ({ recent: [], subscribe: () => () => {} }) } });
    await m.status('web-1', 'online');
    const following = m.master.registry
      .streamLogs('web-1', () => {}, new AbortController().signal)
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await c.stop();
    expect(await following).toMatchObject({ code: 'agent_unreachable' });
  });

  it('remove forgets the agent, disconnects it and tells it not to reconnect', async () => {
    const m = await master();
    const c = client(m.address, 'old');
    await m.status('old', 'online');
    const changes: string[] = [];
    m.master.registry.onChange((a) => changes.push(`${a.name}:${a.status}`));
    await m.master.registry.remove('old');
    expect(m.master.registry.get('old')).toBeUndefined();
    expect(await c.finished).toMatchObject({ kind: 'dismissed', message: 'removed from the master' });
    expect(changes).toContain('old:offline');
    expect(await m.event('agent.disconnected', 'old')).toMatchObject({ status: 'offline' });
    await expect(m.master.registry.remove('old')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('revoke closes the session with no reconnect; the credential and the join token are refused until remove', async () => {
    const m = await master();
    const issued: string[] = [];
    const c = client(m.address, 'edge', { onCredential: (x) => issued.push(x) });
    await m.status('edge', 'online');
    const revoked = await m.master.registry.revoke('edge');
    expect(revoked).toMatchObject({ name: 'edge', status: 'offline', revoked_at: expect.any(String) });
    expect(await c.finished).toMatchObject({ kind: 'dismissed', message: expect.stringMatching(/revoked/) });
    expect(await m.event('agent.disconnected', 'edge')).toMatchObject({ status: 'offline' });

    const back = client(m.address, 'edge', { credential: issued[0] });
    expect(await back.finished).toMatchObject({
      kind: 'refused',
      code: grpc.status.PERMISSION_DENIED,
      message: expect.stringMatching(/credential of agent edge was revoked .*runner agent remove edge/),
    });
    const fresh = client(m.address, 'edge');
    expect(await fresh.finished).toMatchObject({ kind: 'refused', code: grpc.status.PERMISSION_DENIED });
    await expect(m.master.registry.revoke('nobody')).rejects.toMatchObject({ code: 'not_found' });

    // remove is the admin's way back: the join token enrols the name again, with a new credential.
    await m.master.registry.remove('edge');
    const reenrolled = client(m.address, 'edge', { credential: issued[0], onCredential: (x) => issued.push(x) });
    await registered(reenrolled);
    expect(issued).toHaveLength(2);
    expect(issued[1]).not.toBe(issued[0]);
    expect(m.master.registry.get('edge')).toMatchObject({ status: 'online', revoked_at: null });
  });

  it('calls to an offline agent fail with agent_unreachable (503)', async () => {
    const m = await master();
    const c = client(m.address, 'gone');
    await m.status('gone', 'online');
    await c.stop();
    await m.status('gone', 'offline');
    await expect(m.master.registry.metrics('gone')).rejects.toMatchObject({ code: 'agent_unreachable', status: 503 });
    await expect(m.master.registry.exec('gone', 'true')).rejects.toMatchObject({ code: 'agent_unreachable' });
  });
});

describe('restarts', () => {
  it('a restarted master lists known agents offline, and they come back on their own', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-agents-store-'));
    const lines: never[] = [];
    const first = await openStore(dataDir, recordingLogger(lines));
    const m1 = await startMaster({ store: first });
    const port = Number(m1.address.split(':')[1]);
    const c = client(m1.address, 'web-1', { labels: { zone: 'a' } });
    await m1.status('web-1', 'online');
    await m1.master.close();
    await first.close();

    // The same port, as a restarted master has.
    const second = await openStore(dataDir, recordingLogger(lines));
    cleanups.push(() => second.close());
    const m2 = await master({ store: second, config: { port } });
    expect(m2.master.registry.get('web-1')).toMatchObject({
      name: 'web-1',
      status: 'offline',
      labels: { zone: 'a' },
      hostname: 'test-host',
    });
    await m2.status('web-1', 'online');
    await registered(c);
    expect(m2.recorded.events.map((e) => e.type)).toEqual(['agent.connected']);
  });
});
