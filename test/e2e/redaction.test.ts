// A secret registered with the redactor never leaves a master or an agent: real `runner server`
// and `runner agent start` processes at debug level, each loading a third-party plugin that
// registers the secret (as a secrets plugin will). A workflow prints the secret with log.info and
// exec.run, returns it in its message and outputs, locally and on the agent, and fails with it on
// the agent. Then every way out is read: the REST API, every WebSocket message, the agent's log
// stream (SSE), both processes' terminal output, and every file in both data directories
// (runner.log, the store).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { localAuth, repoRoot, runRunner, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const SECRET = `e2e-${randomBytes(8).toString('hex')}-pw`;
const MASK = '***';
const pluginsDir = join(repoRoot, 'test/fixtures/secret-plugins');
const FAST = {
  RUNNER_AGENT_HEARTBEAT_INTERVAL: '0.2',
  RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1',
  RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1',
};

const children: Child[] = [];
afterAll(() => {
  stopAll(children);
});

function everyFile(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? everyFile(path) : [path];
  });
}

/** Paths of files under `dir` whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  return everyFile(dir).filter((file) => readFileSync(file).includes(needle));
}

const script = (where: string) => `
        log.info("${where} logs ${SECRET}", { note = "${SECRET}" })
        local r = exec.run("echo ${where}-${SECRET}")
        return true, "${where} says ${SECRET}", { out = r.stdout, deep = { deeper = { value = "${SECRET}" } } }`;

const WORKFLOW = `version: "1.0"
tasks:
  - name: local
    exec:
      script: |${script('local')}
  - name: remote
    delegate_to: a1
    exec:
      script: |${script('remote')}
  - name: remote-fails
    delegate_to: a1
    exec:
      script: |
        return false, "remote failed holding ${SECRET}"
`;

describe('a value registered with the redactor', () => {
  let master: Child;
  let agent: Child;
  let masterDir: string;
  let agentDir: string;
  let base: string;
  let run: { status: string; tasks: { name: string; status: string; message?: string; outputs?: unknown }[] };
  let runJson: string;
  const wsMessages: string[] = [];
  let sse = '';

  beforeAll(async () => {
    masterDir = tempDataDir('runner-e2e-redact-master-');
    agentDir = tempDataDir('runner-e2e-redact-agent-');
    const env = { E2E_SECRET: SECRET, ...FAST };
    master = spawnRunner(
      [
        '--debug',
        '--plugins-dir',
        pluginsDir,
        'server',
        '--http-port',
        '0',
        '--bind-address',
        '127.0.0.1',
        '--port',
        '0',
      ],
      { env: { RUNNER_DATA_DIR: masterDir, ...env } },
    );
    children.push(master);
    const [, grpcPort] = await waitForOutput(master, /gRPC listening on 127\.0\.0\.1:(\d+)/);
    const [, http] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/);
    base = `http://${http}/api/v1`;
    const token = readFileSync(join(masterDir, 'agent-token'), 'utf8').trim();
    agent = spawnRunner(
      ['--debug', '--plugins-dir', pluginsDir, 'agent', 'start', 'a1', '--master', `127.0.0.1:${grpcPort}`],
      { env: { RUNNER_DATA_DIR: agentDir, RUNNER_JOIN_TOKEN: token, ...env } },
    );
    children.push(agent);
    await waitForOutput(agent, /registered with master/);
    await waitForOutput(master, /agent a1 connected from/);

    // Listeners first: the WebSocket and the agent's log stream see the run as it happens.
    const ws = new WebSocket(`ws://${http}/api/v1/ws`, { headers: localAuth(masterDir) });
    ws.on('message', (data: Buffer) => wsMessages.push(data.toString('utf8')));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const controller = new AbortController();
    const stream = await fetch(`${base}/agents/a1/logs/stream`, {
      signal: controller.signal,
      headers: localAuth(masterDir),
    });
    const reader = stream.body!.getReader();
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        sse += new TextDecoder().decode(value);
      }
    })();

    const submitted = await fetch(`${base}/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...localAuth(masterDir) },
      body: JSON.stringify({ content: WORKFLOW, workflow_name: 'redaction' }),
    });
    const { id } = (await submitted.json()) as { id: string };
    expect(submitted.status).toBe(202);
    // The run's end arrives on the WebSocket; the record is final then.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`run ${id} did not finish: ${wsMessages.join('\n')}`)), 30_000);
      const check = () => {
        if (wsMessages.some((m) => m.includes(id) && /"type":"workflow\.(completed|failed)"/.test(m))) {
          clearTimeout(timer);
          ws.off('message', check);
          resolve();
        }
      };
      ws.on('message', check);
      check();
    });
    const answer = await fetch(`${base}/executions/${id}`, { headers: localAuth(masterDir) });
    runJson = await answer.text();
    run = JSON.parse(runJson) as typeof run;
    // The agent's failure line reaches its log stream before the master records the task.
    while (!sse.includes('remote failed holding')) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await reading;
    ws.close();
    // Both processes stop cleanly, writing what they buffered (logs, the store).
    agent.kill('SIGTERM');
    master.kill('SIGTERM');
    await Promise.all([agent, master].map((child) => new Promise((resolve) => child.once('close', resolve))));
  }, 90_000);

  it('the run did what the workflow says (so the checks below read real output)', () => {
    expect(run.status).toBe('failed');
    expect(run.tasks.map((t) => [t.name, t.status])).toEqual([
      ['local', 'succeeded'],
      ['remote', 'succeeded'],
      ['remote-fails', 'failed'],
    ]);
  });

  it('is masked in the run record: messages, outputs at any depth, task logs', () => {
    expect(runJson).not.toContain(SECRET);
    const [local, remote, fails] = run.tasks;
    expect(local.message).toBe(`local says ${MASK}`);
    expect(remote.message).toBe(`remote says ${MASK}`);
    expect(fails.message).toBe(`remote failed holding ${MASK}`);
    for (const [task, where] of [
      [local, 'local'],
      [remote, 'remote'],
    ] as const) {
      expect(task.outputs).toEqual({ out: `${where}-${MASK}\n`, deep: { deeper: { value: MASK } } });
      expect(JSON.stringify(task)).toContain(`${where} logs ${MASK}`);
    }
  });

  it('is masked in every WebSocket message, which carry ids and millisecond timestamps', () => {
    expect(wsMessages.length).toBeGreaterThan(3);
    for (const text of wsMessages) expect(text).not.toContain(SECRET);
    expect(wsMessages.some((text) => text.includes(MASK))).toBe(true);
    const events = wsMessages.map(
      (text) => JSON.parse(text) as { id?: string; timestamp: number; timestamp_ms: number },
    );
    for (const event of events) expect(Math.floor(event.timestamp_ms / 1000)).toBe(event.timestamp);
    const ids = events.flatMap((e) => (e.id ? [e.id] : []));
    expect(ids.length).toBeGreaterThan(3);
    expect([...ids].sort()).toEqual(ids);
  });

  it("is masked in the agent's log stream", () => {
    expect(sse).toContain(`remote failed holding ${MASK}`);
    expect(sse).not.toContain(SECRET);
  });

  it('is in no file of either data directory: runner.log at debug level, the store', () => {
    const masterLog = readFileSync(join(masterDir, 'logs/runner.log'), 'utf8');
    expect(masterLog).toMatch(/"level":"debug"/);
    expect(masterLog).toContain(`secret-holder: registered a secret ${MASK}`);
    expect(readFileSync(join(agentDir, 'logs/runner.log'), 'utf8')).toContain(MASK);
    expect(filesHolding(masterDir, SECRET)).toEqual([]);
    expect(filesHolding(agentDir, SECRET)).toEqual([]);
  });

  it("is in neither process's terminal output", () => {
    for (const child of [master, agent]) {
      expect(child.output.stdout + child.output.stderr).not.toContain(SECRET);
    }
    expect(master.output.stderr).toContain(MASK);
  });
});

describe('a value registered with the redactor, in a command run embedded', () => {
  it('is masked in what runner run prints (text with task logs, and JSON) and in its data directory', async () => {
    const dataDir = tempDataDir('runner-e2e-redact-embedded-');
    const file = join(dataDir, 'w.yaml');
    writeFileSync(file, `version: "1.0"\ntasks:\n  - name: local\n    exec:\n      script: |${script('local')}\n`);
    const env = { RUNNER_DATA_DIR: dataDir, E2E_SECRET: SECRET };
    for (const args of [['--verbose'], ['--output', 'json']]) {
      const result = await runRunner(['--debug', '--plugins-dir', pluginsDir, 'run', 'w', '--file', file, ...args], {
        env,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(SECRET);
      expect(result.stdout).toContain(MASK);
    }
    expect(filesHolding(dataDir, SECRET)).toEqual([file]);
  }, 30_000);

  it('is masked in what a script prints and returns in the REPL', async () => {
    const dataDir = tempDataDir('runner-e2e-redact-repl-');
    const result = await runRunner(['--plugins-dir', pluginsDir, 'repl'], {
      env: { RUNNER_DATA_DIR: dataDir, E2E_SECRET: SECRET },
      input: `print("printed ${SECRET}")\nreturn "returned ${SECRET}"\n`,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`printed ${MASK}`);
    expect(result.stdout).toContain(`returned ${MASK}`);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 30_000);
});
