// A real master and real agents for the UI tests: `runner server` and `runner agent start`
// processes on loopback (the same way test/e2e/agents.test.ts starts them), with short heartbeats
// so that an agent going offline shows within seconds.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnRunner, tempDataDir, waitForOutput } from '../helpers.js';

export type Child = ReturnType<typeof spawnRunner>;

export const FAST = {
  RUNNER_AGENT_HEARTBEAT_INTERVAL: '0.5',
  RUNNER_AGENT_HEARTBEAT_TIMEOUT: '3',
  RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1',
  RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1',
  RUNNER_AGENT_RECONNECT_MAX_DELAY: '0.5',
};

export interface Master {
  child: Child;
  dataDir: string;
  grpc: string;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  joinToken: string;
  /** Headers that authenticate a test's own API calls (the master's local credential), if any. */
  headers: Record<string, string>;
  /** The first admin's password, written once by the auth plugin. */
  adminPassword: string;
}

export class Fleet {
  readonly children: Child[] = [];

  /** A master with a fresh data directory; `config` is written to its config.yaml first. */
  async master(env: Record<string, string> = {}, config?: string): Promise<Master> {
    const dataDir = tempDataDir('runner-ui-e2e-');
    if (config !== undefined) writeFileSync(join(dataDir, 'config.yaml'), config);
    const child = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
      env: { RUNNER_DATA_DIR: dataDir, ...FAST, ...env },
    });
    this.children.push(child);
    const [, grpcPort] = await waitForOutput(child, /gRPC listening on 127\.0\.0\.1:(\d+)/, 30_000);
    const [, http] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 30_000);
    const tokenFile = join(dataDir, 'auth', 'local.token');
    const headers: Record<string, string> = existsSync(tokenFile)
      ? { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` }
      : {};
    return {
      child,
      dataDir,
      grpc: `127.0.0.1:${grpcPort}`,
      origin: `http://${http}`,
      joinToken: readFileSync(join(dataDir, 'agent-token'), 'utf8').trim(),
      headers,
      adminPassword: readFileSync(join(dataDir, 'auth', 'admin.password'), 'utf8').trim(),
    };
  }

  async agent(master: Master, name: string): Promise<Child> {
    const child = spawnRunner(['agent', 'start', name, '--master', master.grpc], {
      env: { RUNNER_DATA_DIR: tempDataDir('runner-ui-e2e-agent-'), RUNNER_JOIN_TOKEN: master.joinToken, ...FAST },
    });
    this.children.push(child);
    await waitForOutput(child, new RegExp(`registered with master ${master.grpc} as ${name}\\b`), 30_000);
    return child;
  }

  async stop(): Promise<void> {
    const running = this.children.filter((child) => child.exitCode === null && child.signalCode === null);
    for (const child of running) child.kill('SIGTERM');
    // 200 ms to end on their own (most take less), then killed.
    const exited = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    await Promise.race([Promise.all(exited), sleep(200)]);
    for (const child of running) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}

/** A call to the master's API as the test itself (not the browser). */
export async function apiCall<T>(master: Master, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${master.origin}/api/v1${path}`, {
    method,
    headers: { ...master.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Runs a workflow through the API and waits for it to end. */
export async function runWorkflow(
  master: Master,
  content: string,
  name: string,
): Promise<{ id: string; status: string }> {
  const { id } = await apiCall<{ id: string }>(master, 'POST', '/workflows/run', { content, workflow_name: name });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const run = await apiCall<{ id: string; status: string }>(master, 'GET', `/executions/${id}`);
    if (run.status !== 'running') return run;
    if (Date.now() > deadline) throw new Error(`run ${id} still running after 30 s`);
    await sleep(50);
  }
}
