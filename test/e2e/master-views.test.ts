// The APIs behind the web UI's dashboard, logs and settings pages, on a real `runner server` with
// a real agent: counts, system metrics and alerts (plugins/dashboard), the structured log and its
// live tail (plugins/logs, also through `runner logs`), the effective configuration (plugins/ui).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRunner } from './helpers.js';
import { apiCall, Fleet, runWorkflow, type Master } from './ui/fleet.js';

const SECRET = 'a-jwt-secret-of-more-than-32-characters-xyz';
const fleet = new Fleet();
let master: Master;

beforeAll(async () => {
  master = await fleet.master(
    {},
    ['auth:', '  jwt:', `    secret: ${SECRET}`, 'health:', '  memory_threshold: 0.01', ''].join('\n'),
  );
  await fleet.agent(master, 'web-1');
  await runWorkflow(
    master,
    'version: "1.0"\ntasks:\n  - name: a\n    exec:\n      script: log.warn("careful")\n',
    'views',
  );
}, 60_000);

afterAll(() => fleet.stop());

async function status(path: string, headers = master.headers): Promise<{ status: number; body: any }> {
  const response = await fetch(`${master.origin}/api/v1${path}`, { headers });
  return { status: response.status, body: await response.json() };
}

describe('GET /api/v1/dashboard and /metrics', () => {
  it('counts agents and executions as the agents and executions APIs list them', async () => {
    const dashboard = await apiCall<any>(master, 'GET', '/dashboard');
    const agents = await apiCall<any>(master, 'GET', '/agents');
    const runs = await apiCall<any>(master, 'GET', '/executions');
    expect(dashboard.agents.total).toBe(agents.total);
    expect(dashboard.agents.online).toBe(
      agents.agents.filter((a: any) => a.status !== 'offline' && a.status !== 'error').length,
    );
    expect(dashboard.executions).toMatchObject({
      total: runs.total,
      last_24h: runs.total,
      succeeded_24h: 1,
      running: 0,
    });
    expect(dashboard.executions.recent[0]).toMatchObject({ workflow_name: 'views', status: 'succeeded' });
    expect(dashboard.thresholds).toEqual({ cpu: 90, memory: 0.01, disk: 90 });
  });

  it("answers the master's metrics and raises the memory alert its threshold asks for", async () => {
    const metrics = await apiCall<any>(master, 'GET', '/metrics');
    expect(metrics.cpu.cores).toBeGreaterThan(0);
    expect(metrics.memory.total).toBeGreaterThan(metrics.memory.used);
    expect(metrics.disk.used_percent).toBeGreaterThan(0);
    expect(typeof metrics.network.bytes_recv).toBe('number');
    // Memory over 0.01%: the first sample fired the alert, and it stays active.
    const { alerts } = await apiCall<any>(master, 'GET', '/dashboard');
    expect(alerts).toContainEqual(expect.objectContaining({ resource: 'memory', state: 'firing', threshold: 0.01 }));
  });
});

describe('GET /api/v1/logs', () => {
  it('filters by level and age; a bad duration is refused naming since', async () => {
    const all = await apiCall<any>(master, 'GET', '/logs?limit=5000');
    expect(all.entries.length).toBeGreaterThan(3);
    const warn = await apiCall<any>(master, 'GET', '/logs?level=warn');
    expect(warn.entries.length).toBeGreaterThan(0);
    expect(warn.entries.every((e: any) => e.level === 'warn' || e.level === 'error')).toBe(true);
    expect(warn.entries.map((e: any) => e.message)).toContain('careful');
    const none = await apiCall<any>(master, 'GET', '/logs?since=1ms');
    expect(none.entries.length).toBeLessThan(all.entries.length);
    const bad = await status('/logs?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/since/);
    expect((await status('/logs', {})).status).toBe(401);
  });

  it('streams new lines as server-sent events', async () => {
    const controller = new AbortController();
    const response = await fetch(`${master.origin}/api/v1/logs/stream?level=info`, {
      headers: master.headers,
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    await runWorkflow(
      master,
      'version: "1.0"\ntasks:\n  - name: a\n    exec:\n      script: log.info("tail me")\n',
      'tail',
    );
    let text = '';
    const deadline = Date.now() + 10_000;
    while (!text.includes('tail me') && Date.now() < deadline) text += (await reader.read()).value ?? '';
    controller.abort();
    const event = text.split('\n').find((l) => l.startsWith('data: ') && l.includes('tail me'));
    expect(JSON.parse(event!.slice(6))).toMatchObject({ level: 'info', message: 'tail me' });
  });

  it('is what `runner logs` prints', async () => {
    const { code, stdout, stderr } = await runRunner(['logs', '--level', 'warn'], {
      env: { RUNNER_DATA_DIR: master.dataDir },
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/WARN\s+careful/);
    expect(stdout).not.toMatch(/ INFO /);
  });
});

describe('GET /api/v1/config', () => {
  it('shows every declared key with its source, and never a secret', async () => {
    const { keys, data_dir } = await apiCall<any>(master, 'GET', '/config');
    expect(data_dir).toBe(master.dataDir);
    const key = (k: string) => keys.find((row: any) => row.key === k);
    expect(key('health.memory_threshold')).toMatchObject({ value: 0.01, plugin: 'dashboard' });
    expect(key('health.memory_threshold').source).toMatch(/config\.yaml/);
    expect(key('auth.jwt.secret')).toMatchObject({ value: '***', secret: true });
    expect(JSON.stringify(keys)).not.toContain(SECRET);
  });
});
