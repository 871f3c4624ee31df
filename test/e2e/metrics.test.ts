import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpRouterRef } from '@runner/plugin-sdk';
import { hasTool } from '../support/tools.js';
import { freePort, localAuth } from './helpers.js';
import { bootEngine, workflow, type EngineHarness } from './workflow-helpers.js';

/**
 * The metrics plugin on a master kernel booted in this process (issue 21, item 4): the exposition
 * passes Debian's `promtool check metrics`, and a real Prometheus server scrapes the master's
 * /metrics with an API token and counts the runs made. The separate listener (metrics.port) and
 * the Lua module are read from the same master.
 */
const withPrometheus = hasTool('promtool', 'prometheus') && hasTool('prometheus', 'prometheus');

let h: EngineHarness;
let base: string;
let listenerPort: number;
let viewerToken: string;
const children: ChildProcess[] = [];

// A script calling a module runs in the local executor (engine.run_as) as root, in the master
// itself (run_as self) otherwise: either way its metrics are the master's.
const COUNTING = workflow(`
tasks:
  - name: count
    exec:
      script: |
        metrics.inc("deploys", { env = "test" })
        metrics.set("queue_length", 7)
        return metrics.time("step", function() return true, "timed" end)
`);
const FAILING = workflow(`
tasks:
  - name: fail
    exec: { script: 'return false, "no"' }
`);

beforeAll(async () => {
  listenerPort = await freePort();
  h = await bootEngine({
    profile: 'master',
    env: {
      RUNNER_HTTP_PORT: '0',
      RUNNER_HTTP_BIND_ADDRESS: '127.0.0.1',
      RUNNER_GRPC_PORT: '0',
      RUNNER_METRICS_PORT: String(listenerPort),
      ...(process.getuid?.() === 0 ? {} : { RUNNER_ENGINE_RUN_AS: 'self' }),
    },
  });
  base = `http://127.0.0.1:${h.kernel.get(HttpRouterRef).address()?.port}`;
  const created = await fetch(`${base}/api/v1/auth/tokens`, {
    method: 'POST',
    headers: { ...localAuth(h.dataDir), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'scraper', role: 'viewer' }),
  });
  expect(created.status).toBe(201);
  viewerToken = ((await created.json()) as { token: string }).token;
  // Through the REST API, so the HTTP timing sees a declared route with a run id in its URL.
  for (const [name, text] of [
    ['counting', COUNTING],
    ['counting', COUNTING],
    ['failing', FAILING],
  ] as const) {
    const outcome = await h.run(name, text);
    const read = await fetch(`${base}/api/v1/executions/${outcome.record.id}`, { headers: localAuth(h.dataDir) });
    expect(read.status).toBe(200);
  }
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await h?.stop();
});

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text() };
}

/** The value of the exposition's line for `series` (name and labels as exported). */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the exposition', () => {
  it('is served at /metrics to a token with metrics:view, and refused without credentials', async () => {
    expect((await scrape(`${base}/metrics`)).status).toBe(401);
    const { status, text } = await scrape(`${base}/metrics`, { authorization: `Bearer ${viewerToken}` });
    expect(status).toBe(200);
    expect(valueOf(text, 'flow_workflow_executions_total{status="success"}')).toBe(2);
    expect(valueOf(text, 'flow_workflow_executions_total{status="failed"}')).toBe(1);
    expect(valueOf(text, 'flow_workflow_tasks_total{workflow="counting"}')).toBe(2);
    expect(valueOf(text, 'flow_workflow_duration_seconds_count{workflow="failing"}')).toBe(1);
    expect(valueOf(text, 'runner_runs_in_flight')).toBe(0);
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).toContain('flow_agents_connected 0');
    // The route as declared, never the URL with the run's id.
    expect(
      valueOf(
        text,
        'runner_http_request_duration_seconds_count{method="GET",route="/api/v1/executions/:id",status="200"}',
      ),
    ).toBe(3);
    expect(text).not.toMatch(/route="\/api\/v1\/executions\/[^:]/);
    // The Lua module's, with the workflow label it adds.
    expect(valueOf(text, 'runner_workflow_deploys_total{workflow="counting",env="test"}')).toBe(2);
    expect(valueOf(text, 'runner_workflow_queue_length{workflow="counting"}')).toBe(7);
    expect(valueOf(text, 'runner_workflow_step_seconds_count{workflow="counting"}')).toBe(2);
  });

  it('is served without credentials on the loopback listener of metrics.port, and nothing else there', async () => {
    const { status, text } = await scrape(`http://127.0.0.1:${listenerPort}/metrics`);
    expect(status).toBe(200);
    expect(valueOf(text, 'flow_workflow_executions_total{status="success"}')).toBe(2);
    expect((await scrape(`http://127.0.0.1:${listenerPort}/api/v1/health`)).status).toBe(404);
  });

  it.runIf(withPrometheus)('passes promtool check metrics', async () => {
    const { text } = await scrape(`http://127.0.0.1:${listenerPort}/metrics`);
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
    expect(checked.status).toBe(0);
  });
});

describe.runIf(withPrometheus)('a real Prometheus server', () => {
  it('scrapes the master with the API token and its query counts the runs made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-prometheus-'));
    writeFileSync(join(dir, 'token'), viewerToken);
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'scrape_configs:',
        '  - job_name: runner',
        `    authorization: { credentials_file: ${join(dir, 'token')} }`,
        `    static_configs: [{ targets: ["${new URL(base).host}"] }]`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    const prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    children.push(prometheus);
    const query = encodeURIComponent('sum(flow_workflow_executions_total)');
    // Prometheus starts, scrapes every second and answers once the first scrape is stored.
    const deadline = Date.now() + 60_000;
    let answer: string | undefined;
    while (Date.now() < deadline) {
      const result = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${query}`)
        .then((r) => r.json() as Promise<{ data?: { result?: { value: [number, string] }[] } }>)
        .catch(() => undefined);
      answer = result?.data?.result?.[0]?.value[1];
      if (answer !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(answer).toBe('3');
    const targets = (await (await fetch(`http://127.0.0.1:${port}/api/v1/targets`)).json()) as {
      data: { activeTargets: { health: string; lastError: string }[] };
    };
    expect(targets.data.activeTargets.map((t) => [t.health, t.lastError])).toEqual([['up', '']]);
  }, 90_000);
});
