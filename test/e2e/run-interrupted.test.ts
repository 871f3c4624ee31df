import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { finished, localAuth, sleepsWith, spawnRunner, tempDataDir } from './helpers.js';

/**
 * A master killed with SIGKILL in the middle of a run (a task waiting on `sleep 300`), then started
 * again on the same data directory: the run ends `interrupted` with the reason, no run stays
 * `running`, the `sleep` it left is killed, and a run acknowledged before the kill is still there.
 */

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

type Master = ReturnType<typeof spawnRunner> & {
  httpPort: number;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
};

async function startMaster(dataDir: string, grpcPort?: number, env: Record<string, string> = {}): Promise<Master> {
  const httpPort = await freePort();
  grpcPort ??= await freePort();
  const child = spawnRunner(
    ['server', '--http-port', String(httpPort), '--bind-address', '127.0.0.1', '--port', String(grpcPort)],
    { env: { RUNNER_DATA_DIR: dataDir, RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1', ...env } },
  ) as Master;
  child.httpPort = httpPort;
  const tokenFile = join(dataDir, 'auth', 'local.token');
  child.api = async (method, path, body) => {
    // The master's local credential (authentication is on by default).
    const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined;
    const response = await fetch(`http://127.0.0.1:${httpPort}/api/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  for (const started = Date.now(); ; await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`runner server exited: ${child.output.stderr}`);
    if (Date.now() - started > 30_000) throw new Error(`runner server not healthy in 30 s: ${child.output.stderr}`);
    const healthy = await child.api('GET', '/health').then(
      (r) => r.status === 200,
      () => false,
    );
    if (healthy) return child;
  }
}

/** Running, not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  for (const started = Date.now(); ; await sleep(50)) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
  }
}

/** `runner agent start a1` joined to the master of `dataDir`, once registered; its own data in `agentDir`. */
async function startAgent(
  dataDir: string,
  grpcPort: number,
  agentDir: string,
): Promise<ReturnType<typeof spawnRunner>> {
  const agent = spawnRunner(['agent', 'start', 'a1', '--master', `127.0.0.1:${grpcPort}`], {
    env: {
      RUNNER_DATA_DIR: agentDir,
      RUNNER_JOIN_TOKEN: readFileSync(join(dataDir, 'agent-token'), 'utf8').trim(),
      RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1',
      RUNNER_AGENT_RECONNECT_MAX_DELAY: '0.3',
    },
  });
  await until('the agent registered', () => (/registered with master/.test(agent.output.stderr) ? true : undefined));
  return agent;
}

/** Starts a run whose task waits on `sleep 300` on agent a1; its id and the sleep's pid. */
async function sleepOnAgent(master: Master, name: string): Promise<{ runId: string; pid: number }> {
  const pidFile = join(mkdtempSync(join(tmpdir(), `runner-interrupted-${name}-`)), 'sleep.pid');
  const run = await master.api('POST', '/workflows/run', {
    workflow_name: name,
    content: `version: "1.0"
tasks:
  - name: wait
    delegate_to: a1
    exec:
      script: |
        exec.run("echo $$ > ${pidFile}; exec sleep 300")
        return true
`,
  });
  expect(run.status).toBe(202);
  const pid = await until('the sleep started on the agent', () =>
    existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== ''
      ? Number(readFileSync(pidFile, 'utf8'))
      : undefined,
  );
  return { runId: run.body.id, pid };
}

describe('a master killed during a run', () => {
  const masters: ReturnType<typeof spawnRunner>[] = [];
  let orphan: number | undefined;

  afterEach(async () => {
    for (const m of masters.splice(0)) {
      if (m.exitCode === null && m.signalCode === null) {
        m.kill('SIGTERM');
        await finished(m);
      }
    }
    if (orphan !== undefined && running(orphan)) process.kill(-orphan, 'SIGKILL');
  });

  // With the default engine.run_as (runner-exec under a root master) the command is the local
  // executor's, which stops it when its channel to the master closes; with `self` it is the
  // master's own child, which outlives it until the next start kills its recorded group.
  it.each([
    ['the local executor (default)', {}, false],
    ['engine.run_as: self', { RUNNER_ENGINE_RUN_AS: 'self' }, true],
  ])(
    '%s: leaves the run interrupted, no run running, no orphan child, no acknowledged run missing',
    async (_how, env, outlives) => {
      const dataDir = tempDataDir();
      const work = mkdtempSync(join(tmpdir(), 'runner-interrupted-'));
      // The task's command runs as engine.run_as (runner-exec under a root master): it writes here.
      chmodSync(work, 0o777);
      const pidFile = join(work, 'sleep.pid');
      const first = await startMaster(dataDir, undefined, env);
      masters.push(first);

      const long = await first.api('POST', '/workflows/run', {
        workflow_name: 'long',
        content: `version: "1.0"
tasks:
  - name: quick
    exec:
      script: return true, "done"
  - name: wait
    depends_on: [quick]
    exec:
      script: |
        exec.run("echo $$ > ${pidFile}; exec sleep 300")
        return true
`,
      });
      expect(long.status).toBe(202);
      // The shell writes its pid, then becomes `sleep` (same pid, leading its own process group).
      orphan = await until('the sleep started', () =>
        existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== ''
          ? Number(readFileSync(pidFile, 'utf8'))
          : undefined,
      );
      await until('sleep exec-ed', () =>
        readFileSync(`/proc/${orphan}/cmdline`, 'utf8').startsWith('sleep') ? true : undefined,
      );

      // Acknowledged before the kill: the run's end event goes out only once its end is durable
      // (a GET may show it a moment earlier: reads see writes the store has applied but not yet
      // synced), and so is every write before it, the process group's record included.
      const socket = new WebSocket(`ws://127.0.0.1:${first.httpPort}/api/v1/ws`, { headers: localAuth(dataDir) });
      const ended = new Set<string>();
      socket.on('message', (raw) => {
        const message = JSON.parse(raw.toString());
        if (message.type === 'workflow.completed') ended.add(message.data.run_id);
      });
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const short = await first.api('POST', '/workflows/run', {
        workflow_name: 'short',
        content: 'version: "1.0"\ntasks:\n  - name: only\n    exec:\n      script: return true\n',
      });
      await until('the short run ended', () => (ended.has(short.body.id) ? true : undefined));
      socket.close();

      first.kill('SIGKILL');
      await finished(first);
      if (outlives) {
        // The restart's clean-up means something only if the child outlived its master.
        expect(running(orphan)).toBe(true);
      } else {
        await until('the executor stopped the sleep', () => (running(orphan as number) ? undefined : true), 10_000);
      }

      const second = await startMaster(dataDir, undefined, env);
      masters.push(second);
      const record = (await second.api('GET', `/executions/${long.body.id}`)).body;
      expect(record.status).toBe('interrupted');
      expect(record.error).toMatch(
        /^interrupted: pid \d+ on .* stopped before the run ended; found at the start of pid/,
      );
      expect(record.counts).toEqual({ succeeded: 1 });
      expect(record.completed_at).toBeDefined();
      expect((await second.api('GET', '/executions?status=running')).body.total).toBe(0);
      expect((await second.api('GET', '/executions?status=interrupted')).body.executions.map((e: any) => e.id)).toEqual(
        [long.body.id],
      );
      expect((await second.api('GET', `/executions/${short.body.id}`)).body.status).toBe('succeeded');
      await until('the orphaned sleep was killed', () => (running(orphan as number) ? undefined : true), 5_000);
    },
    90_000,
  );

  it('leaves a delegated run interrupted, and its agent drops the task with the connection', async () => {
    const dataDir = tempDataDir();
    const grpcPort = await freePort();
    const first = await startMaster(dataDir, grpcPort);
    masters.push(first);
    masters.push(await startAgent(dataDir, grpcPort, tempDataDir('runner-interrupted-agent-data-')));
    const run = await sleepOnAgent(first, 'remote');
    orphan = run.pid;

    first.kill('SIGKILL');
    await finished(first);
    // The agent's connection ended with the master: it stops the task and kills its command.
    await until('the agent dropped the task', () => (running(orphan as number) ? undefined : true), 10_000);

    const second = await startMaster(dataDir, grpcPort);
    masters.push(second);
    const record = (await second.api('GET', `/executions/${run.runId}`)).body;
    expect(record.status).toBe('interrupted');
    expect(record.error).toMatch(/^interrupted: pid \d+ on .* stopped before the run ended/);
    expect((await second.api('GET', '/executions?status=running')).body.total).toBe(0);
  }, 90_000);

  it('an agent killed with SIGKILL while runs start processes at 50 a second: none of them is alive 10 s after it restarts, also ones that left their group or cleared their environment', async () => {
    const dataDir = tempDataDir();
    const agentDir = tempDataDir('runner-interrupted-agent-data-');
    const grpcPort = await freePort();
    const master = await startMaster(dataDir, grpcPort);
    masters.push(master);
    const agent = await startAgent(dataDir, grpcPort, agentDir);
    masters.push(agent);
    const marker = String(3000 + Math.floor(Math.random() * 100_000));
    // Should the test fail, what it started does not outlive it.
    onTestFinished(() => {
      for (const pid of sleepsWith(marker)) process.kill(pid, 'SIGKILL');
    });
    // A third wait on their command; the others start one that leaves its group (setsid), half of
    // those with a cleared environment (env -i: no owner mark; the agent's cgroup finds them).
    const scripts = [
      `exec.run("sleep ${marker}")`,
      `os.execute("setsid sleep ${marker} > /dev/null 2>&1 &")`,
      `os.execute("env -i setsid sleep ${marker} > /dev/null 2>&1 &")`,
    ];
    const submitted: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      const content = `version: "1.0"\ntasks:\n  - name: t\n    delegate_to: a1\n    exec: { script: '${scripts[i % 3]}' }\n`;
      submitted.push(master.api('POST', '/workflows/run', { workflow_name: `spawn-${i}`, content }));
      await sleep(20);
    }
    await Promise.all(submitted);
    await until('sleeps of each kind started on the agent', () => (sleepsWith(marker).length >= 30 ? true : undefined));
    agent.kill('SIGKILL');
    await finished(agent);
    // Nothing of the agent is left to stop them: its commands outlive it.
    expect(sleepsWith(marker).length).toBeGreaterThan(0);
    // Its runs end (the agent was lost) before it comes back, so none starts anew after.
    await until('the runs ended', async () =>
      (await master.api('GET', '/executions?status=running')).body.total === 0 ? true : undefined,
    );
    masters.push(await startAgent(dataDir, grpcPort, agentDir));
    await until('no process of the runs is alive', () => (sleepsWith(marker).length === 0 ? true : undefined), 10_000);
  }, 90_000);
});
