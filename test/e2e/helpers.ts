import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { selfSignedCertificate } from '@runner/plugin-sdk/testing';
import type { paths } from '../../ui/src/lib/api/schema.js';

type GeneratedRun = Extract<
  paths['/api/v1/executions/{id}']['get']['responses'][200],
  { content: unknown }
>['content']['application/json'];
/** One task of a run, as the generated type of the served OpenAPI document has it. */
export type ApiTask = NonNullable<GeneratedRun['tasks']>[number];
/** A run as `GET /api/v1/executions/:id` answers it (with its tasks, which that route always sends). */
export type ApiRun = Omit<GeneratedRun, 'tasks'> & { tasks: ApiTask[] };

export const repoRoot = resolve(import.meta.dirname, '../..');
export const runnerBin = join(repoRoot, 'kernel/bin/runner.js');

export function tempDataDir(prefix = 'runner-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // Open as /tmp is (sticky): under a root master, local tasks' commands run as engine.run_as
  // (runner-exec) and write their markers here; a master makes its own data directory 0700.
  chmodSync(dir, 0o1777);
  return dir;
}

/** A self-signed certificate for localhost and 127.0.0.1 (Debian's openssl), as `<dir>/<name>.pem|.key`. */
export function selfSignedCert(dir: string, name: string): { cert: string; key: string } {
  return selfSignedCertificate(dir, name);
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A TCP port free on the loopback interface now (for a master's HTTP or gRPC listener). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** Runs `runner ...` as a real process (the built bin) and collects its output. */
export function runRunner(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string } = {},
): Promise<Finished> {
  const child = spawnRunner(args, options);
  if (options.input !== undefined) child.stdin?.end(options.input);
  return finished(child);
}

export function spawnRunner(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): ChildProcess & { output: { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [runnerBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcess & { output: { stdout: string; stderr: string } };
  child.output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => (child.output.stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (child.output.stderr += d.toString()));
  return child;
}

/** Ends every child still running (a test's clean-up); empties the list so a later hook finds none. */
export function stopAll(children: ChildProcess[], signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

export function finished(child: ChildProcess & { output?: { stdout: string; stderr: string } }): Promise<Finished> {
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) =>
      resolvePromise({ code, signal, stdout: child.output?.stdout ?? '', stderr: child.output?.stderr ?? '' }),
    );
  });
}

/**
 * Resolves with the first match of `pattern` in the child's combined output, looking only past
 * `from` (a length of that output taken earlier, to wait for a line printed after it). A number
 * for `options` is the timeout: 45 s by default, a ceiling far above a start-up's second at rest
 * (a machine busy many times over stretched one past 15 s).
 */
export function waitForOutput(
  child: ChildProcess & { output: { stdout: string; stderr: string } },
  pattern: RegExp,
  options: number | { from?: number; timeoutMs?: number } = {},
): Promise<RegExpMatchArray> {
  const { from = 0, timeoutMs = 45_000 } = typeof options === 'number' ? { timeoutMs: options } : options;
  const seen = () => (child.output.stdout + child.output.stderr).slice(from);
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      const match = seen().match(pattern);
      if (match) {
        cleanup();
        resolvePromise(match);
      }
      return match;
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms; got:\n${seen()}`));
    }, timeoutMs);
    const onExit = (code: number | null) => {
      // The line may have arrived with the exit: look once more before failing.
      if (check()) return;
      cleanup();
      reject(new Error(`process exited (${code}) before printing ${pattern}:\n${seen()}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', onExit);
    check();
  });
}

/**
 * The headers of the master's local credential (`<dataDir>/auth/local.token`, written at each
 * start): what the CLI on the master's host sends. Authentication is on by default.
 */
export function localAuth(dataDir: string): { authorization: string } {
  return { authorization: `Bearer ${localToken(dataDir)}` };
}

/** The master's local credential itself, for a CLI elsewhere (`RUNNER_TOKEN`). */
export function localToken(dataDir: string): string {
  return readFileSync(join(dataDir, 'auth', 'local.token'), 'utf8').trim();
}

/** fetch with the master's local credential added (a test's stand-in for the local CLI). */
export function fetchAs(dataDir: string): (url: string, init?: RequestInit) => Promise<Response> {
  return (url, init = {}) =>
    fetch(url, {
      ...init,
      headers: { ...localAuth(dataDir), ...(init.headers as Record<string, string> | undefined) },
    });
}

/** Heartbeats and reconnects fast enough for tests; gRPC on loopback. */
export const FAST_AGENTS = {
  RUNNER_AGENT_HEARTBEAT_INTERVAL: '0.2',
  RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1',
  RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1',
};

/**
 * A real `runner server` on free loopback ports and `runner agent start` agents joined to it with
 * its join token, each waited for on both sides. The processes are pushed to `children` as they
 * start, so the caller's cleanup kills them even when a later step fails.
 */
export async function startFleet(
  prefix: string,
  agents: string[],
  children: ReturnType<typeof spawnRunner>[],
  /** Given to the master and every agent (e.g. RUNNER_LUA_ISOLATION). */
  env: Record<string, string> = {},
): Promise<{ masterDir: string; base: string; grpc: string }> {
  const masterDir = tempDataDir(`${prefix}-master-`);
  const master = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
    env: { RUNNER_DATA_DIR: masterDir, ...FAST_AGENTS, ...env },
  });
  children.push(master);
  const [, grpcPort] = await waitForOutput(master, /gRPC listening on 127\.0\.0\.1:(\d+)/);
  const [, http] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/);
  const token = readFileSync(join(masterDir, 'agent-token'), 'utf8').trim();
  for (const name of agents) {
    const agent = spawnRunner(['agent', 'start', name, '--master', `127.0.0.1:${grpcPort}`], {
      env: { RUNNER_DATA_DIR: tempDataDir(`${prefix}-${name}-`), RUNNER_JOIN_TOKEN: token, ...FAST_AGENTS, ...env },
    });
    children.push(agent);
    await waitForOutput(agent, /registered with master/);
    await waitForOutput(master, new RegExp(`agent ${name} connected from`));
  }
  return { masterDir, base: `http://${http}/api/v1`, grpc: `127.0.0.1:${grpcPort}` };
}

/** A master from startFleet: its data directory (for the local credential) and REST base URL. */
export interface FleetMaster {
  masterDir: string;
  base: string;
}

/** A JSON call to the master's REST API with its local credential. */
export async function callApi<T>(
  fleet: FleetMaster,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${fleet.base}${path}`, {
    method,
    headers: {
      ...localAuth(fleet.masterDir),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  // A 204 (DELETE) has no body.
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Starts a run with POST /workflows/run and polls it until it has ended; the record as the API gives it. */
export async function runToEnd<R extends { status: string }>(
  fleet: FleetMaster,
  body: Record<string, unknown>,
): Promise<R> {
  const started = await callApi<{ id: string }>(fleet, 'POST', '/workflows/run', body);
  if (started.status !== 202) throw new Error(`POST /workflows/run: ${started.status} ${JSON.stringify(started.body)}`);
  for (;;) {
    const { body: run } = await callApi<R>(fleet, 'GET', `/executions/${started.body.id}`);
    if (run.status !== 'running' && run.status !== 'pending') return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A workflow whose first task, local, leaves `<dir>/<name>.ran` and whose second (`ship`, at line
 * 10) delegates to `target` (YAML, as written after `delegate_to:`): a run refused before it
 * starts leaves no file. `vars.target` is `web-1`, for templates.
 */
export function touchThenDelegate(dir: string, name: string, target: string): { content: string; marker: string } {
  const marker = join(dir, `${name}.ran`);
  const content = `version: "1.0"
vars:
  target: web-1
tasks:
  - name: touch
    exec:
      script: |
        file.write("${marker}", "ran")
        return true
  - name: ship
    depends_on: [touch]
    delegate_to: ${target}
    exec:
      script: return true
`;
  return { content, marker };
}

/** Processes whose command line is `sleep <marker>`, alive (not zombies). */
export function sleepsWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      if (args[0].endsWith('sleep') && args[1] === marker && state !== 'Z') found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
