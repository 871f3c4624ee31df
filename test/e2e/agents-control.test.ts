// Real `runner agent start` processes against the master side of the transport hosted in this
// test process, so the test can call the AgentRegistry and AgentDelegator directly: metrics from
// systeminformation, exec, the agent's own log, live task logs, restart (re-exec), stop, remove,
// and the reconnection policy.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentLogEntry, DelegatedTask, TaskLogLine } from '@runner/plugin-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMaster, TOKEN, type TestMaster } from '../../plugins/agent-transport/src/test-support.js';
import { finished, spawnRunner, stopAll, tempDataDir } from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const FAST = { RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1', RUNNER_AGENT_RECONNECT_MAX_DELAY: '0.3' };
const children: Child[] = [];
const extraPids: number[] = [];

afterEach(() => {
  stopAll(children);
  for (const pid of extraPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

let m: TestMaster;
beforeAll(async () => {
  m = await startMaster({ config: { heartbeatIntervalMs: 200, heartbeatTimeoutMs: 2000 } });
});
afterAll(() => m.master.close());

function spawnAgent(name: string, env: Record<string, string> = {}, address = m.address): Child {
  const child = spawnRunner(['agent', 'start', name, '--master', address, '--token', TOKEN], {
    env: { RUNNER_DATA_DIR: tempDataDir('runner-e2e-agent-'), ...FAST, ...env },
  });
  children.push(child);
  return child;
}

async function startAgent(name: string, env: Record<string, string> = {}): Promise<Child> {
  const child = spawnAgent(name, env);
  await m.status(name, 'online');
  // Online on the master; wait until the agent knows it too (it logs the registration).
  await until(
    () => /registered with master/.test(child.output.stderr),
    () => child.output.stderr,
  );
  return child;
}

/** Whether a process runs (a zombie waiting to be reaped has ended). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(check: () => boolean, describe: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const task = (script: string, overrides: Partial<DelegatedTask> = {}): DelegatedTask => ({
  runId: 'run-e2e',
  workflowName: 'e2e',
  task: 'job',
  unit: 'job',
  script,
  globals: { vars: { app: 'web' }, values: { port: 8081 } },
  dryRun: false,
  attempt: 1,
  ...overrides,
});

describe('an agent process serving the master', () => {
  it('starts and registers quickly, reporting its host, modules and labels', async () => {
    const started = Date.now();
    const child = spawnAgent('quick', { RUNNER_AGENT_LABELS: 'zone=a,tier=web' });
    const agent = await m.status('quick', 'online');
    const elapsed = Date.now() - started;
    // A ceiling, not a speed target: test/bench/agent-idle.mjs measures the time to registered.
    expect(elapsed).toBeLessThan(30_000);
    expect(agent).toMatchObject({
      name: 'quick',
      labels: { zone: 'a', tier: 'web' },
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(agent.modules).toEqual(expect.arrayContaining(['exec', 'log', 'state', 'goroutine', 'reliability']));
    expect(agent.os).toMatch(/^linux /);
    expect(child.output.stdout).toMatch(/runner agent quick \(pid \d+\): connecting to master/);
  });

  it('reports metrics, processes, network and disks from systeminformation', async () => {
    await startAgent('metered');
    const metrics = await m.master.registry.metrics('metered');
    expect(metrics.cpu.cores).toBeGreaterThan(0);
    expect(metrics.cpu.load_avg).toHaveLength(3);
    expect(metrics.memory.total_bytes).toBeGreaterThan(metrics.memory.used_bytes);
    expect(metrics.memory.usage_percent).toBeGreaterThan(0);
    expect(metrics.disk.total_bytes).toBeGreaterThan(0);
    expect(metrics.processes).toBeGreaterThan(1);
    expect(metrics.uptime).toBeGreaterThanOrEqual(0);
    expect(metrics.network).toEqual({ rx_bytes_per_sec: expect.any(Number), tx_bytes_per_sec: expect.any(Number) });
    const processes = await m.master.registry.processes('metered');
    expect(processes.some((p) => /node/.test(p.name) || /node/.test(p.command))).toBe(true);
    expect((await m.master.registry.network('metered')).map((n) => n.name)).toContain('lo');
    expect((await m.master.registry.disks('metered')).some((d) => d.mount === '/')).toBe(true);
    // The heartbeat summary feeds the registry's view.
    await until(
      () => (m.master.registry.get('metered')?.memory_usage ?? 0) > 0,
      () => JSON.stringify(m.master.registry.get('metered')),
    );
  });

  it('runs a command for the master, with a timeout', async () => {
    await startAgent('worker');
    expect(await m.master.registry.exec('worker', 'echo $((6 * 7)); echo oops >&2; exit 4')).toMatchObject({
      stdout: '42\n',
      stderr: 'oops\n',
      exit_code: 4,
      timed_out: false,
    });
    expect(await m.master.registry.exec('worker', ['printf', '%s', 'a b'])).toMatchObject({
      stdout: 'a b',
      exit_code: 0,
    });
    const slow = await m.master.registry.exec('worker', 'sleep 5', { timeoutMs: 200 });
    expect(slow).toMatchObject({ timed_out: true, exit_code: null });
  });

  it("streams the agent's own log: recent lines first, then new ones as they are written", async () => {
    await startAgent('chatty');
    const entries: AgentLogEntry[] = [];
    const controller = new AbortController();
    const following = m.master.registry.streamLogs('chatty', (entry) => entries.push(entry), controller.signal);
    await until(
      () => entries.some((e) => /registered with master/.test(e.message)),
      () => JSON.stringify(entries),
    );
    await m.master.registry.exec('chatty', 'true');
    await until(
      () => entries.some((e) => /running a command for the master: true/.test(e.message)),
      () => JSON.stringify(entries),
    );
    controller.abort();
    await following;
    expect(entries[0]).toMatchObject({ timestamp: expect.any(String), level: 'INFO' });
  });

  it('streams a task log live: lines arrive while the task still runs', async () => {
    await startAgent('live');
    const gate = join(mkdtempSync(join(tmpdir(), 'runner-e2e-gate-')), 'go');
    const lines: TaskLogLine[] = [];
    let done = false;
    const running = m.master.delegator
      .execute(
        'live',
        task(`
          log.info("waiting for the gate", { port = values.port })
          while not io.open("${gate}") do exec.run("sleep 0.02") end
          log.warn("through the gate")
          return true, "done", { app = vars.app }
        `),
        { signal: new AbortController().signal, onLog: (line) => lines.push(line) },
      )
      .finally(() => (done = true));
    await until(
      () => lines.some((l) => l.message === 'waiting for the gate'),
      () => JSON.stringify(lines),
    );
    expect(done).toBe(false);
    expect(lines.find((l) => l.message === 'waiting for the gate')).toMatchObject({
      level: 'info',
      fields: { port: 8081 },
    });
    writeFileSync(gate, '');
    expect(await running).toEqual({ success: true, message: 'done', outputs: { app: 'web' } });
    expect(lines.some((l) => l.level === 'warn' && l.message === 'through the gate')).toBe(true);
  });

  it('an agent killed with SIGKILL mid-task fails the task at once', async () => {
    const victim = await startAgent('victim');
    const marker = join(mkdtempSync(join(tmpdir(), 'runner-e2e-marker-')), 'started');
    const execution = m.master.delegator
      .execute('victim', task(`io.open("${marker}", "w"):close(); exec.run("sleep 30"); return true`), {
        signal: new AbortController().signal,
        onLog: () => {},
      })
      .catch((error: unknown) => error);
    await until(
      () => existsSync(marker),
      () => 'no marker',
    );
    victim.kill('SIGKILL');
    // At once: the stream breaks with the process; the heartbeat timeout would say "no heartbeat".
    expect(await execution).toMatchObject({
      code: 'agent_lost',
      message: expect.stringMatching(/agent victim was lost while running the task: (?!no heartbeat)/),
    });
    await m.status('victim', 'offline');
  });

  it('restart re-executes the agent process, which registers again; the process started stays and waits for it', async () => {
    const child = await startAgent('phoenix');
    const reconnected = new Promise<void>((resolve) => {
      let seen = 0;
      const off = m.master.registry.onChange((agent) => {
        if (agent.name !== 'phoenix') return;
        if (agent.status === 'offline') seen++;
        else if (seen > 0) {
          off();
          resolve();
        }
      });
    });
    await m.master.registry.restart('phoenix');
    await until(
      () => /restarting as pid \d+/.test(child.output.stdout),
      () => child.output.stdout,
    );
    const [, pid] = /restarting as pid (\d+)/.exec(child.output.stdout) ?? [];
    extraPids.push(Number(pid));
    await Promise.race([
      reconnected,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no reconnect:\n${child.output.stderr}`)), 20_000)),
    ]);
    expect(m.master.registry.get('phoenix')?.status).toBe('online');
    expect(Number(pid)).not.toBe(child.pid);
    // Nothing detached: the process the shell started is still the agent's, waiting for the new one.
    expect(child.exitCode).toBeNull();

    // A second restart is asked of the first process again: no chain of waiting processes.
    const again = child.output.stdout.length;
    await m.master.registry.restart('phoenix');
    await until(
      () => /restarting as pid \d+/.test(child.output.stdout.slice(again)),
      () => child.output.stdout,
    );
    const [, second] = /restarting as pid (\d+)/.exec(child.output.stdout.slice(again)) ?? [];
    extraPids.push(Number(second));
    expect(alive(Number(pid))).toBe(false);
    await m.status('phoenix', 'online');

    // Stopping the process that was started stops the agent: none is left running.
    child.kill('SIGTERM');
    await until(
      () => child.exitCode !== null,
      () => `the agent started first did not exit:\n${child.output.stdout}\n${child.output.stderr}`,
    );
    expect(child.exitCode).toBe(0);
    await until(
      () => !alive(Number(second)),
      () => `pid ${second} still runs`,
    );
    await m.status('phoenix', 'offline');
  }, 90_000);

  it('under systemd, restart exits with code 75 for the unit (Restart=on-failure) to start it again', async () => {
    const child = await startAgent('supervised', { INVOCATION_ID: 'e2e-unit' });
    await m.master.registry.restart('supervised');
    const exit = await finished(child);
    expect(exit.code).toBe(75);
    expect(exit.stdout).toMatch(/exiting with code 75 for the service manager to restart it/);
    await m.status('supervised', 'offline');
  });

  it('stop ends the agent process; it is offline at once', async () => {
    const child = await startAgent('stoppable');
    await m.master.registry.stop('stoppable');
    const exit = await finished(child);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/runner agent stoppable: stopped by the master/);
    expect(m.master.registry.get('stoppable')?.status).toBe('offline');
  });

  it('remove disconnects the agent, which does not come back', async () => {
    const child = await startAgent('removed');
    await m.master.registry.remove('removed');
    const exit = await finished(child);
    expect(exit.code).toBe(0);
    expect(exit.stderr).toMatch(/the master ended the session and asked it not to reconnect: removed from the master/);
    expect(m.master.registry.get('removed')).toBeUndefined();
  });
});

describe('reconnection policy', () => {
  it('retries with backoff, opens the circuit breaker, and gives up after the maximum retry count', async () => {
    // Nothing listens on this port: every attempt fails at once.
    const closed = await startMaster();
    const address = closed.address;
    await closed.master.close();
    const started = Date.now();
    const child = spawnAgent(
      'patient',
      {
        RUNNER_AGENT_RECONNECT_MAX_RETRIES: '5',
        RUNNER_AGENT_CIRCUIT_BREAKER_FAILURES: '3',
        RUNNER_AGENT_CIRCUIT_BREAKER_RESET_TIMEOUT: '0.5',
      },
      address,
    );
    const exit = await finished(child);
    const elapsed = Date.now() - started;
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/retry 1 in \d+ ms/);
    expect(exit.stderr).toMatch(/retry 2 in \d+ ms/);
    expect(exit.stderr).toMatch(/3 failures in a row.*circuit breaker open: next attempt in 500 ms/);
    expect(exit.stderr).toMatch(
      /runner: gave up connecting to master .* after 5 failed attempts \(agent.reconnect_max_retries\)/,
    );
    // Two backoff delays (~0.1 s, ~0.2 s) and two open-circuit pauses (0.5 s each).
    expect(elapsed).toBeGreaterThan(1000);
  });

  it('an agent started before its master connects as soon as the master is up', async () => {
    const later = await startMaster();
    const address = later.address;
    const port = Number(address.split(':')[1]);
    await later.master.close();
    const child = spawnAgent('early', {}, address);
    await until(
      () => /cannot reach master/.test(child.output.stderr),
      () => child.output.stderr,
    );
    const up = await startMaster({ config: { port } });
    try {
      await up.status('early', 'online');
    } finally {
      await up.master.close();
    }
  });
});
