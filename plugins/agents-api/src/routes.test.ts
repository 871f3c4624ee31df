import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { FakeRegistry, fakeAgent } from './fake-registry.js';
import { startTestMaster, type TestMaster } from './test-master.js';

const masters: TestMaster[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const m of masters.splice(0)) await m.kernel.stop();
});

async function start(registry: FakeRegistry | undefined, config: Record<string, unknown> = {}) {
  const master = await startTestMaster(registry, config);
  masters.push(master);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${master.base}/api/v1${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
  return { master, call };
}

function fleet(): FakeRegistry {
  return new FakeRegistry([
    fakeAgent('web-2', { labels: { env: 'prod', tier: 'web' } }),
    fakeAgent('web-1', { labels: { env: 'prod', tier: 'web' } }),
    fakeAgent('db-1', { status: 'warning', labels: { env: 'prod', tier: 'db' } }),
    fakeAgent('build-1', { status: 'offline', labels: { env: 'ci' } }),
    fakeAgent('Web-Canary', { status: 'error', labels: {} }),
  ]);
}

describe('GET /agents', () => {
  it('lists every agent sorted by name, with the total', async () => {
    const { call } = await start(fleet());
    const { status, body } = await call('GET', '/agents');
    expect(status).toBe(200);
    expect(body.total).toBe(5);
    expect(body.agents.map((a: { name: string }) => a.name)).toEqual([
      'Web-Canary',
      'build-1',
      'db-1',
      'web-1',
      'web-2',
    ]);
    expect(body.agents[3]).toMatchObject({
      name: 'web-1',
      address: '10.0.0.5:41234',
      status: 'online',
      cpu_usage: 12.5,
    });
  });

  it('pages with limit and offset; total counts every match', async () => {
    const { call } = await start(fleet());
    const { body } = await call('GET', '/agents?limit=2&offset=1');
    expect(body).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(body.agents.map((a: { name: string }) => a.name)).toEqual(['build-1', 'db-1']);
    expect((await call('GET', '/agents?offset=10')).body).toMatchObject({ agents: [], total: 5 });
  });

  it('filters by status (active meaning online), name substring and labels', async () => {
    const { call } = await start(fleet());
    const names = async (query: string) =>
      (await call('GET', `/agents?${query}`)).body.agents.map((a: { name: string }) => a.name);
    expect(await names('status=online')).toEqual(['web-1', 'web-2']);
    expect(await names('status=active')).toEqual(['web-1', 'web-2']);
    expect(await names('status=offline,error')).toEqual(['Web-Canary', 'build-1']);
    expect(await names('name=WEB')).toEqual(['Web-Canary', 'web-1', 'web-2']);
    expect(await names('label=tier=web')).toEqual(['web-1', 'web-2']);
    expect(await names('label=env=prod,tier=db')).toEqual(['db-1']);
    expect(await names('label=tier')).toEqual(['db-1', 'web-1', 'web-2']);
    const filtered = await call('GET', '/agents?label=env=prod&limit=1');
    expect(filtered.body.total).toBe(3);
  });

  it('refuses bad parameters with 400 naming the parameter', async () => {
    const { call } = await start(fleet());
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=5000', 'limit'],
      ['limit=ten', 'limit'],
      ['offset=-1', 'offset'],
      ['status=sleeping', 'status'],
      ['label==x', 'label'],
      ['page=2', 'page'],
    ]) {
      const { status, body } = await call('GET', `/agents?${query}`);
      expect(status, query).toBe(400);
      expect(body.error, query).toMatchObject({ code: 'invalid_input', field });
    }
  });

  it('answers 503 when the master has no agent transport', async () => {
    const { call } = await start(undefined);
    const { status, body } = await call('GET', '/agents');
    expect(status).toBe(503);
    expect(body.error.code).toBe('agents_unavailable');
    expect(body.error.message).toMatch(/agent transport/);
  });
});

describe('one agent', () => {
  it('GET /agents/:name answers the agent, or 404', async () => {
    const { call } = await start(fleet());
    const found = await call('GET', '/agents/db-1');
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ name: 'db-1', status: 'warning', modules: ['exec', 'file', 'facts'] });
    const missing = await call('GET', '/agents/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'not_found', message: 'agent "nope" does not exist' });
  });

  it('DELETE /agents/:name removes it (204), then it is gone', async () => {
    const registry = fleet();
    const { call } = await start(registry);
    expect((await call('DELETE', '/agents/web-1')).status).toBe(204);
    expect(registry.calls).toContainEqual({ method: 'remove', name: 'web-1' });
    expect((await call('GET', '/agents/web-1')).status).toBe(404);
    expect((await call('DELETE', '/agents/web-1')).status).toBe(404);
  });

  it('serves metrics, processes, network and disk', async () => {
    const { call } = await start(fleet());
    const metrics = await call('GET', '/agents/web-1/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatchObject({
      cpu: { cores: 4, usage_percent: 12.5, load_avg: [0.5, 0.4, 0.3] },
      memory: { usage_percent: 25 },
      disk: { usage_percent: 40 },
    });
    expect((await call('GET', '/agents/web-1/processes')).body.processes[0]).toMatchObject({ pid: 1, name: 'init' });
    expect((await call('GET', '/agents/web-1/network')).body.interfaces[0]).toMatchObject({ name: 'eth0' });
    expect((await call('GET', '/agents/web-1/disk')).body.disks[0]).toMatchObject({ mount: '/', usage_percent: 40 });
    expect((await call('GET', '/agents/nope/disk')).status).toBe(404);
  });

  it('caches metrics answers per agent: one agent call serves every request of the period', async () => {
    const registry = fleet();
    let n = 0;
    registry.metricsValue = () => ({ ...fleetMetrics(), processes: ++n });
    const { call } = await start(registry);
    const answers = await Promise.all([1, 2, 3].map(() => call('GET', '/agents/web-1/metrics')));
    answers.push(await call('GET', '/agents/web-1/metrics'));
    expect(answers.map((a) => a.body.processes)).toEqual([1, 1, 1, 1]);
    expect(registry.calls.filter((c) => c.method === 'metrics' && c.name === 'web-1')).toHaveLength(1);
    // Another agent has its own entry.
    expect((await call('GET', '/agents/web-2/metrics')).body.processes).toBe(2);
  });

  it('does not cache failures: an offline agent answers 503 until it is back', async () => {
    const registry = fleet();
    const { call } = await start(registry);
    const offline = await call('GET', '/agents/build-1/metrics');
    expect(offline.status).toBe(503);
    expect(offline.body.error).toMatchObject({ code: 'agent_unreachable' });
    expect(offline.body.error.message).toMatch(/build-1" is offline/);
    registry.change({ ...registry.agents.get('build-1')!, status: 'online' });
    expect((await call('GET', '/agents/build-1/metrics')).status).toBe(200);
  });
});

function fleetMetrics() {
  return new FakeRegistry().metricsValue();
}

describe('POST /agents/:name/exec', () => {
  it('runs a command and answers its output, exit code and duration', async () => {
    const registry = fleet();
    const { call } = await start(registry);
    const { status, body } = await call('POST', '/agents/web-1/exec', { command: 'uptime' });
    expect(status).toBe(200);
    expect(body).toEqual({ stdout: 'ran "uptime"\n', stderr: '', exit_code: 0, timed_out: false, duration: 0.01 });
    expect(registry.calls.at(-1)).toEqual({
      method: 'exec',
      name: 'web-1',
      args: ['uptime', { timeoutMs: 60_000, cwd: undefined }],
    });
  });

  it('passes a list command, a duration or seconds timeout, and cwd', async () => {
    const registry = fleet();
    const { call } = await start(registry);
    await call('POST', '/agents/web-1/exec', { command: ['ls', '-l'], timeout: '1.5m', cwd: '/tmp' });
    expect(registry.calls.at(-1)?.args).toEqual([['ls', '-l'], { timeoutMs: 90_000, cwd: '/tmp' }]);
    await call('POST', '/agents/web-1/exec', { command: 'true', timeout: 2.5 });
    expect(registry.calls.at(-1)?.args).toEqual(['true', { timeoutMs: 2500, cwd: undefined }]);
    await call('POST', '/agents/web-1/exec', { command: 'true', timeout: '500ms' });
    expect(registry.calls.at(-1)?.args).toEqual(['true', { timeoutMs: 500, cwd: undefined }]);
  });

  it('answers a timed-out command as the agent reports it', async () => {
    const registry = fleet();
    registry.execResult = () => ({ stdout: 'partial', stderr: '', exit_code: null, timed_out: true, duration: 1 });
    const { call } = await start(registry);
    const { body } = await call('POST', '/agents/web-1/exec', { command: 'sleep 10', timeout: 1 });
    expect(body).toMatchObject({ timed_out: true, exit_code: null });
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const registry = fleet();
    const { call } = await start(registry);
    const cases: [unknown, string][] = [
      [{}, 'command'],
      [{ command: '' }, 'command'],
      [{ command: 42 }, 'command'],
      [{ command: [] }, 'command'],
      [{ command: ['ls', 3] }, 'command.1'],
      [{ command: 'ls', timeout: 'soon' }, 'timeout'],
      // One number and one unit, as everywhere else (the SDK's grammar).
      [{ command: 'ls', timeout: '1m30s' }, 'timeout'],
      [{ command: 'ls', timeout: 0 }, 'timeout'],
      [{ command: 'ls', timeout: '2h' }, 'timeout'],
      [{ command: 'ls', cwd: '' }, 'cwd'],
      [{ command: 'ls', cwd: 7 }, 'cwd'],
      [{ command: 'ls', timeoutMs: 5 }, 'timeoutMs'],
      [['ls'], 'body'],
    ];
    for (const [body, field] of cases) {
      const answer = await call('POST', '/agents/web-1/exec', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error, JSON.stringify(body)).toMatchObject({ code: 'invalid_input', field });
    }
    const noBody = await call('POST', '/agents/web-1/exec');
    expect(noBody.status).toBe(400);
    expect(registry.calls.filter((c) => c.method === 'exec')).toHaveLength(0);
  });

  it('answers 404 for an unknown agent and 503 with the transport message for an offline one', async () => {
    const { call } = await start(fleet());
    const missing = await call('POST', '/agents/nope/exec', { command: 'ls' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('agent "nope" does not exist');
    const offline = await call('POST', '/agents/build-1/exec', { command: 'ls' });
    expect(offline.status).toBe(503);
    expect(offline.body.error).toMatchObject({ code: 'agent_unreachable' });
    expect(offline.body.error.message).toMatch(/^agent "build-1" is offline/);
  });
});

describe('restart and stop', () => {
  it('ask the agent and answer 202', async () => {
    const registry = fleet();
    const { call } = await start(registry);
    const restart = await call('POST', '/agents/web-1/restart');
    expect(restart.status).toBe(202);
    expect(restart.body).toMatchObject({ name: 'web-1', action: 'restart' });
    const stop = await call('POST', '/agents/web-2/stop');
    expect(stop.status).toBe(202);
    expect(registry.calls.map((c) => `${c.method} ${c.name}`)).toEqual(['restart web-1', 'stop web-2']);
    expect((await call('POST', '/agents/build-1/restart')).status).toBe(503);
    expect((await call('POST', '/agents/nope/stop')).status).toBe(404);
  });
});

/** An open server-sent events response, with its text so far. */
function openStream(
  base: string,
  path: string,
): Promise<{ res: IncomingMessage; text: () => string; next: (re: RegExp) => Promise<string>; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/api/v1${path}`, { headers: { accept: 'text/event-stream' } }, (res) => {
      let text = '';
      const waiters: (() => void)[] = [];
      const ended = new Promise<void>((r) => res.once('end', () => r()));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const w of waiters.splice(0)) w();
      });
      res.on('end', () => {
        for (const w of waiters.splice(0)) w();
      });
      const next = async (re: RegExp): Promise<string> => {
        for (;;) {
          const match = re.exec(text);
          if (match) return match[0];
          if (res.readableEnded) throw new Error(`stream ended without ${re}; got:\n${text}`);
          await new Promise<void>((r) => waiters.push(r));
        }
      };
      resolve({ res, text: () => text, next, ended });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /agents/:name/logs/stream', () => {
  it('streams log entries as server-sent events, with heartbeats, until the client goes', async () => {
    const registry = fleet();
    const { master } = await start(registry, { 'agents.sse_heartbeat': 0.05 });
    const stream = await openStream(master.base, '/agents/web-1/logs/stream');
    expect(stream.res.statusCode).toBe(200);
    expect(stream.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.res.headers['cache-control']).toMatch(/no-cache/);
    await registry.streamsOpened(1);
    const agentSide = registry.logStreams[0];
    agentSide.emit({ timestamp: '2025-01-01T00:00:00.000Z', level: 'INFO', message: 'hello' });
    agentSide.emit({ timestamp: '2025-01-01T00:00:01.000Z', level: 'ERROR', message: 'two\nlines' });
    const second = await stream.next(/data: .*lines"\}\n\n/);
    expect(JSON.parse(second.slice('data: '.length))).toEqual({
      timestamp: '2025-01-01T00:00:01.000Z',
      level: 'ERROR',
      message: 'two\nlines',
    });
    expect(stream.text()).toContain(
      'data: {"timestamp":"2025-01-01T00:00:00.000Z","level":"INFO","message":"hello"}\n\n',
    );
    await stream.next(/^: heartbeat \S+\n\n/m);
    expect(agentSide.signal.aborted).toBe(false);
    const aborted = new Promise<void>((resolve) => agentSide.signal.addEventListener('abort', () => resolve()));
    stream.res.destroy();
    await aborted;
  });

  it('refuses an unknown agent with 404 and an offline one with 503, as JSON', async () => {
    const { call } = await start(fleet());
    const missing = await call('GET', '/agents/nope/logs/stream');
    expect(missing.status).toBe(404);
    const offline = await call('GET', '/agents/build-1/logs/stream');
    expect(offline.status).toBe(503);
    expect(offline.body.error.code).toBe('agent_unreachable');
  });

  it('ends with an error event when the agent is lost mid-stream, and an end event when the master stops', async () => {
    const registry = fleet();
    const { master } = await start(registry);
    const first = await openStream(master.base, '/agents/web-1/logs/stream');
    await registry.streamsOpened(1);
    registry.logStreams[0].fail(
      Object.assign(new Error('agent "web-1" disconnected'), { code: 'agent_unreachable', status: 503 }),
    );
    await first.next(/event: error\ndata: .*\n\n/);
    expect(first.text()).toContain(
      'event: error\ndata: {"code":"agent_unreachable","message":"agent \\"web-1\\" disconnected"}',
    );
    await first.ended;

    const second = await openStream(master.base, '/agents/web-2/logs/stream');
    await registry.streamsOpened(2);
    await master.kernel.stop();
    masters.splice(masters.indexOf(master), 1);
    await second.ended;
    expect(second.text()).toContain('event: end\ndata: {"reason":"the master is stopping"}');
  });
});

describe('WebSocket agent_update', () => {
  function connect(master: TestMaster): Promise<{ ws: WebSocket; next: () => Promise<any> }> {
    const ws = new WebSocket(`ws://127.0.0.1:${master.port}/api/v1/ws`);
    sockets.push(ws);
    const queue: any[] = [];
    const waiters: ((m: any) => void)[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type !== 'agent_update') return;
      const waiter = waiters.shift();
      if (waiter) waiter(message);
      else queue.push(message);
    });
    const next = () =>
      queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise<any>((resolve) => waiters.push(resolve));
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve({ ws, next }));
      ws.once('error', reject);
    });
  }

  it('broadcasts every status or metrics change, not a repeat of the last one', async () => {
    const registry = fleet();
    const { master } = await start(registry);
    const { next } = await connect(master);
    const web1 = registry.agents.get('web-1')!;
    const before = Math.floor(Date.now() / 1000);
    registry.change({ ...web1, cpu_usage: 55.5 });
    const first = await next();
    expect(first).toEqual({
      type: 'agent_update',
      timestamp: expect.any(Number),
      timestamp_ms: expect.any(Number),
      data: { name: 'web-1', status: 'online', cpu_usage: 55.5, memory_usage: 40.25 },
    });
    expect(first.timestamp).toBeGreaterThanOrEqual(before);
    // Same numbers (a heartbeat with nothing new): not sent again; the next change is.
    registry.change({ ...web1, cpu_usage: 55.5, last_heartbeat: new Date().toISOString() });
    registry.change({ ...web1, cpu_usage: 55.5, status: 'warning', memory_usage: 91 });
    expect((await next()).data).toEqual({ name: 'web-1', status: 'warning', cpu_usage: 55.5, memory_usage: 91 });
  });

  it('reports a removed agent as offline', async () => {
    const registry = fleet();
    const { master, call } = await start(registry);
    const { next } = await connect(master);
    await call('DELETE', '/agents/db-1');
    expect((await next()).data).toMatchObject({ name: 'db-1', status: 'offline' });
  });
});
