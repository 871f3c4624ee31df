// A master and its agents as an operator runs them: real `runner server` and `runner agent start`
// processes on loopback, real gRPC between them, workflows submitted to the master's REST API and
// with `runner run`. Short heartbeats (RUNNER_AGENT_HEARTBEAT_INTERVAL=0.2, offline after 2 s of
// silence) keep the liveness tests quick.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import {
  type ApiRun,
  type ApiTask,
  fetchAs,
  finished,
  freePort,
  localAuth,
  runnerBin,
  runRunner,
  selfSignedCert,
  spawnRunner,
  stopAll,
  tempDataDir,
  waitForOutput,
} from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const FAST = {
  RUNNER_AGENT_HEARTBEAT_INTERVAL: '0.2',
  RUNNER_AGENT_HEARTBEAT_TIMEOUT: '2',
  RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1',
  RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1',
  RUNNER_AGENT_RECONNECT_MAX_DELAY: '0.3',
  // Retries 0.3 s apart would open the breaker (10 failures: 300 s pause) while a master restarts
  // on a loaded machine; the breaker has its own unit tests.
  RUNNER_AGENT_CIRCUIT_BREAKER_FAILURES: '0',
};

const children: Child[] = [];
afterAll(async () => {
  stopAll(children);
});

function output(child: Child): string {
  return child.output.stdout + child.output.stderr;
}

/** Resolves when `pattern` appears in the child's output after `from`; 30 s for a loaded machine. */
const waitFor = (child: Child, pattern: RegExp, options: { from?: number; timeoutMs?: number } = {}) =>
  waitForOutput(child, pattern, { timeoutMs: 30_000, ...options });

interface Master {
  child: Child;
  dataDir: string;
  grpc: string;
  base: string;
  token: string;
  /** fetch with the master's local credential (authentication is on by default). */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
}

async function startMaster(
  dataDir: string,
  options: { port?: number; env?: Record<string, string>; args?: string[] } = {},
): Promise<Master> {
  const child = spawnRunner(
    [
      'server',
      '--http-port',
      '0',
      '--bind-address',
      '127.0.0.1',
      '--port',
      String(options.port ?? 0),
      ...(options.args ?? []),
    ],
    {
      env: { RUNNER_DATA_DIR: dataDir, ...FAST, ...options.env },
    },
  );
  children.push(child);
  const [, grpcPort] = await waitFor(child, /gRPC listening on 127\.0\.0\.1:(\d+)/);
  const [, http] = await waitFor(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  return {
    child,
    dataDir,
    grpc: `127.0.0.1:${grpcPort}`,
    base: `http://${http}/api/v1`,
    token: readFileSync(join(dataDir, 'agent-token'), 'utf8').trim(),
    fetch: fetchAs(dataDir),
  };
}

/** An API token for a CI runner, made by the CLI on the master's host (`runner auth token create`). */
async function ciToken(master: Master, name: string): Promise<string> {
  const created = await runRunner(['auth', 'token', 'create', '--name', name, '--role', 'operator'], {
    env: { RUNNER_DATA_DIR: master.dataDir },
  });
  if (created.code !== 0) throw new Error(`runner auth token create: ${created.stderr}`);
  return created.stdout.trim();
}

function spawnAgent(master: Master, name: string, args: string[] = [], env: Record<string, string> = {}): Child {
  const child = spawnRunner(['agent', 'start', name, '--master', master.grpc, ...args], {
    env: { RUNNER_DATA_DIR: tempDataDir('runner-e2e-agent-'), RUNNER_JOIN_TOKEN: master.token, ...FAST, ...env },
  });
  children.push(child);
  return child;
}

async function startAgent(
  master: Master,
  name: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<Child> {
  const from = output(master.child).length;
  const child = spawnAgent(master, name, args, env);
  await waitFor(child, new RegExp(`registered with master ${master.grpc} as ${name}\\b`));
  await waitFor(master.child, new RegExp(`agent ${name} connected from 127\\.0\\.0\\.1:\\d+`), { from });
  return child;
}

async function submit(master: Master, workflow: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await master.fetch(`${master.base}/workflows/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: workflow, workflow_name: 'e2e', ...extra }),
  });
  const body = (await response.json()) as { id?: string; error?: { message: string } };
  if (!response.ok || !body.id) throw new Error(`POST /workflows/run: ${response.status} ${body.error?.message}`);
  return body.id;
}

async function finishedRun(master: Master, id: string, timeoutMs = 20_000): Promise<ApiRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = (await (await master.fetch(`${master.base}/executions/${id}`)).json()) as ApiRun;
    if (run.status !== 'running') return run;
    if (Date.now() > deadline) throw new Error(`run ${id} still running after ${timeoutMs} ms: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function run(master: Master, workflow: string, extra: Record<string, unknown> = {}): Promise<ApiRun> {
  return finishedRun(master, await submit(master, workflow, extra));
}

const byName = (r: ApiRun) => Object.fromEntries(r.tasks.map((t) => [t.name, t]));

const MIB = 1024 * 1024;

/** A config file as an operator writes one (RUNNER_CONFIG). */
function configFile(yaml: string): string {
  const file = join(tempDataDir('runner-e2e-config-'), 'runner.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** A task of a workflow file run on `agent`, whose failure is ignored, with `script`. */
function task(name: string, agent: string, script: string): string {
  return [
    `  - name: ${name}`,
    `    delegate_to: ${agent}`,
    '    ignore_errors: true',
    '    exec:',
    '      script: |',
    ...script.split('\n').map((line) => `        ${line}`),
  ].join('\n');
}

describe('a master with three agents', () => {
  let master: Master;
  const agents: Record<string, Child> = {};
  let a1MetricsPort: number;

  beforeAll(async () => {
    master = await startMaster(tempDataDir('runner-e2e-master-'));
    a1MetricsPort = await freePort();
    const started = await Promise.all([
      startAgent(master, 'a1', ['--labels', 'zone=east,tier=web'], {
        RUNNER_AGENT_METRICS_PORT: String(a1MetricsPort),
      }),
      startAgent(master, 'a2', ['--labels', 'zone=west']),
      startAgent(master, 'a3', ['--labels', 'zone=east']),
    ]);
    [agents.a1, agents.a2, agents.a3] = started;
  }, 60_000);

  it('each agent registered once, and the master announced it', () => {
    for (const name of ['a1', 'a2', 'a3']) {
      expect(output(agents[name])).toMatch(
        new RegExp(`runner agent ${name} \\(pid \\d+\\): connecting to master ${master.grpc}`),
      );
      expect(output(master.child).match(new RegExp(`agent ${name} connected from`, 'g'))).toHaveLength(1);
    }
  });

  it('delegation all: the task runs on every listed agent, each with its own values', async () => {
    const result = await run(
      master,
      `version: "1.0"
tasks:
  - name: hello
    delegate_to: [a1, a2, a3]
    exec:
      script: |
        log.info("port is " .. values.port)
        metrics.inc("greetings")
        local r = exec.run("echo -n ok")
        return true, "port " .. values.port, { out = r.stdout, app = vars.app }
vars: { app: web }
values:
  a1: { port: 8081 }
  a2: { port: 8082 }
  a3: { port: 8083 }
`,
    );
    expect(result.status, JSON.stringify(result.tasks)).toBe('succeeded');
    const tasks = byName(result);
    for (const [name, port] of [
      ['a1', 8081],
      ['a2', 8082],
      ['a3', 8083],
    ] as const) {
      expect(tasks[`hello@${name}`]).toMatchObject({
        agent: name,
        status: 'succeeded',
        message: `port ${port}`,
        outputs: { out: 'ok', app: 'web' },
      });
      expect(tasks[`hello@${name}`].log?.some((l) => l.message === `port is ${port}`)).toBe(true);
    }
  });

  it("an agent exports its own metrics on agent.metrics_port, its delegated tasks' included; the master exports every agent's", async () => {
    const agentText = await (await fetch(`http://127.0.0.1:${a1MetricsPort}/metrics`)).text();
    expect(agentText).toMatch(/^flow_agent_memory_usage_bytes\{agent="a1"\} [1-9]\d*$/m);
    expect(agentText).toMatch(/^runner_workflow_greetings_total\{workflow="[^"]*"\} 1$/m);
    expect(agentText).toContain('process_cpu_seconds_total');
    const masterMetrics = async () => (await master.fetch(`${master.base.replace(/\/api\/v1$/, '')}/metrics`)).text();
    // Memory and disk bytes are asked of each agent a second after it joins.
    await expect.poll(masterMetrics, { timeout: 20_000 }).toMatch(/^flow_agent_disk_usage_bytes\{agent="a3"\} [1-9]/m);
    const masterText = await masterMetrics();
    expect(masterText).toMatch(/^flow_agents_connected 3$/m);
    for (const name of ['a1', 'a2', 'a3']) {
      expect(masterText).toMatch(new RegExp(`^flow_agent_cpu_usage_percent\\{agent="${name}"\\} \\d`, 'm'));
      expect(masterText).toMatch(new RegExp(`^flow_agent_memory_usage_bytes\\{agent="${name}"\\} [1-9]\\d*$`, 'm'));
    }
  });

  it('a loop with delegate_to "{{ item }}" runs each iteration on its agent', async () => {
    const result = await run(
      master,
      `version: "1.0"
tasks:
  - name: per-host
    loop: [a1, a2, a3]
    delegate_to: "{{ item }}"
    exec:
      script: return true, "hello from " .. item .. " n" .. loop_index
`,
    );
    expect(result.status, JSON.stringify(result.tasks)).toBe('succeeded');
    expect(result.tasks.map((t) => [t.name, t.agent, t.message])).toEqual([
      ['per-host[a1]', 'a1', 'hello from a1 n1'],
      ['per-host[a2]', 'a2', 'hello from a2 n2'],
      ['per-host[a3]', 'a3', 'hello from a3 n3'],
    ]);
  });

  it('delegation round_robin: one agent per loop item, rotating through the list', async () => {
    const result = await run(
      master,
      `version: "1.0"
tasks:
  - name: spread
    loop: [1, 2, 3, 4, 5, 6]
    delegate_to: [a1, a2, a3]
    delegation: round_robin
    exec:
      script: return true, values.me
values: { a1: { me: a1 }, a2: { me: a2 }, a3: { me: a3 } }
`,
    );
    expect(result.status).toBe('succeeded');
    const ran = result.tasks.map((t) => t.message);
    // Each ran where the engine sent it, and the rotation covered every agent twice.
    expect(result.tasks.map((t) => t.agent)).toEqual(ran);
    expect([...ran].sort()).toEqual(['a1', 'a1', 'a2', 'a2', 'a3', 'a3']);
    expect(ran.slice(0, 3).sort()).toEqual(['a1', 'a2', 'a3']);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "resources.*: an agent holds its tasks' commands to them, by cgroup or by each command's limits, and offers its host less the reserves",
    async () => {
      // resources.* as an operator writes them: held by cgroups where the agent may make them
      // (root here), and by each command's own limits when told so.
      [agents.limited, agents.rlimited] = await Promise.all([
        startAgent(master, 'limited', [], {
          RUNNER_CONFIG: configFile(
            'resources:\n  cpu: { limit: 0.2, reserve: 1 }\n  memory: { limit: 64, reserve: 512 }\n  disk: { limit: 1 }\n',
          ),
        }),
        startAgent(master, 'rlimited', [], {
          RUNNER_CONFIG: configFile(
            'resources:\n  enforcement: rlimit\n  cpu: { limit: 0.5 }\n  memory: { limit: 256 }\n',
          ),
        }),
      ]);
      const scratch = tempDataDir('runner-e2e-resources-');
      // Per agent: a command past the memory, then (small allocation, a file past 1 MiB, a busy
      // second, where a command runs and with which limits) in one task.
      const tasks = (agent: string) => [
        task(
          `${agent}-big`,
          agent,
          `local r = exec.run([[perl -e '$x = "x" x (200*1024*1024)']])\nreturn r.success, tostring(r.exit_code)`,
        ),
        task(
          `${agent}-rest`,
          agent,
          [
            `local small = exec.run([[perl -e '$x = "x" x (16*1024*1024)']])`,
            `local file = os.execute("head -c 2097152 /dev/zero > ${scratch}/${agent}")`,
            `exec.run("timeout 0.5 sh -c 'while :; do :; done'")`,
            'local where = exec.run("cat /proc/self/cgroup /proc/self/limits")',
            'return true, "", { small = small.exit_code, file = file == true, where = where.stdout }',
          ].join('\n'),
        ),
      ];
      const id = await submit(
        master,
        ['version: "1.0"', 'tasks:', ...tasks('limited'), ...tasks('rlimited')].join('\n'),
      );
      const by = byName(await finishedRun(master, id, 60_000));
      const rest = (agent: string) => by[`${agent}-rest`].outputs as { small: number; file: boolean; where: string };
      for (const agent of ['limited', 'rlimited']) {
        // Past the memory: killed by the kernel at the cgroup's limit, or refused its allocation.
        expect(by[`${agent}-big`].status, JSON.stringify(by[`${agent}-big`])).toBe('ignored');
        expect(rest(agent)?.small, JSON.stringify(by[`${agent}-rest`])).toBe(0);
      }
      // resources.disk.limit: the write past 1 MiB fails (SIGXFSZ); the other agent has none.
      expect(rest('limited').file).toBe(false);
      expect(rest('rlimited').file).toBe(true);

      // This host offers cgroup v1 memory and cpu to root (cgroup2 delegates no controller here).
      expect(output(agents.limited)).toMatch(
        /task resources \(cgroup v1\): memory: limited by \S+\/runner-agent-[0-9a-f]{16} /,
      );
      const where = rest('limited').where;
      const cpuPath = /^\d+:[^:]*\bcpu\b[^:]*:(.*)$/m.exec(where)?.[1];
      expect(cpuPath, where).toMatch(/\/runner-agent-[0-9a-f]{16}$/);
      expect(readFileSync(`/sys/fs/cgroup/cpu${cpuPath}/cpu.cfs_quota_us`, 'utf8').trim()).toBe('20000');
      const stat = readFileSync(`/sys/fs/cgroup/cpu${cpuPath}/cpu.stat`, 'utf8');
      expect(Number(/nr_throttled (\d+)/.exec(stat)?.[1])).toBeGreaterThan(0);
      const memoryPath = /^\d+:[^:]*\bmemory\b[^:]*:(.*)$/m.exec(where)?.[1];

      expect(readFileSync(`/sys/fs/cgroup/memory${memoryPath}/memory.limit_in_bytes`, 'utf8').trim()).toBe(
        String(64 * MIB),
      );
      // The agent itself stays outside: its heartbeats are not throttled.
      expect(readFileSync(`/proc/${agents.limited.pid}/cgroup`, 'utf8')).not.toMatch(/runner-agent-/);

      // Told 'rlimit': no cgroup, each command's address space, and a lower priority for CPU.
      expect(output(agents.rlimited)).toMatch(
        /task resources \(rlimit\): memory: each command's address space limited to 268435456 bytes .*; cpu: not throttled \(.*\), commands run at nice 10/,
      );
      const limits = rest('rlimited').where;
      expect(limits).not.toMatch(/runner-agent-/);
      expect(limits).toMatch(/^Max address space\s+268435456\s+268435456\s+bytes/m);

      // What it offers: 64 MiB (the limit, below the host's memory less 512 MiB), 1 core (0.2).
      const metrics = (await (await master.fetch(`${master.base}/agents/limited/metrics`)).json()) as {
        cpu: { cores: number };
        memory: { total_bytes: number };
      };
      expect(metrics.memory.total_bytes).toBe(64 * MIB);
      expect(metrics.cpu.cores).toBe(1);

      // Stopped cleanly, an agent removes its tasks' cgroups.
      agents.limited.kill('SIGTERM');
      expect((await finished(agents.limited)).code).toBe(0);
      expect(existsSync(`/sys/fs/cgroup/cpu${cpuPath}`)).toBe(false);
      expect(existsSync(`/sys/fs/cgroup/memory${memoryPath}`)).toBe(false);
    },
    90_000,
  );

  it('delegation conditional: only agents whose facts match (labels, usage) run the task', async () => {
    const result = await run(
      master,
      `version: "1.0"
tasks:
  - name: east-only
    delegate_to: [a1, a2, a3]
    delegation: { strategy: conditional, when: "{{ agent.labels.zone == 'east' and agent.cpu_usage <= 100 and agent.status != 'offline' }}" }
    exec:
      script: return true, values.me
values: { a1: { me: a1 }, a2: { me: a2 }, a3: { me: a3 } }
`,
    );
    expect(result.status).toBe('succeeded');
    expect(result.tasks.map((t) => [t.agent, t.message]).sort()).toEqual([
      ['a1', 'a1'],
      ['a3', 'a3'],
    ]);
  });

  it('delegation failover: a dead first agent is passed over for the next one', async () => {
    const doomed = await startAgent(master, 'doomed');
    const from = output(master.child).length;
    doomed.kill('SIGKILL');
    // The stream breaks with the process: the master knows at once, without waiting for silence.
    // Known by the broken stream, not by the heartbeat timeout (which would say "no heartbeat").
    await waitFor(master.child, /agent doomed disconnected: (?!no heartbeat)/, { from });
    const result = await run(
      master,
      `version: "1.0"
tasks:
  - name: notify
    delegate_to: [doomed, a2, a3]
    delegation: failover
    exec:
      script: return true, "ran on " .. values.me
values: { doomed: { me: doomed }, a2: { me: a2 }, a3: { me: a3 } }
`,
    );
    expect(result.status).toBe('succeeded');
    expect(result.tasks).toHaveLength(1);
    expect(result.tasks[0].message).toBe('ran on a2');
  });

  it('delegation failover: a frozen first agent is given up after the heartbeat timeout and the next one runs the task', async () => {
    const frozen = await startAgent(master, 'frozen');
    frozen.kill('SIGSTOP');
    try {
      const started = Date.now();
      const result = await run(
        master,
        `version: "1.0"
tasks:
  - name: notify
    delegate_to: [frozen, a3]
    delegation: failover
    exec:
      script: return true, "ran on " .. values.me
values: { frozen: { me: frozen }, a3: { me: a3 } }
`,
      );
      expect(result.status).toBe('succeeded');
      expect(result.tasks[0].message).toBe('ran on a3');
      expect(result.tasks[0].log?.some((l) => /agent frozen unreachable, trying the next one/.test(l.message))).toBe(
        true,
      );
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      frozen.kill('SIGKILL');
    }
  });

  it('`runner run --delegate-to` against the master: the master runs the workflow on the agent', async () => {
    const file = join(master.dataDir, 'local.yaml');
    writeFileSync(
      file,
      `version: "1.0"
tasks:
  - name: where
    exec:
      script: |
        log.info("on the agent")
        return true, "ran with port " .. values.port
values:
  a3: { port: 9093 }
`,
    );
    const result = await runRunner(
      ['run', 'local', '--file', file, '--delegate-to', 'a3', '--yes', '--output', 'json'],
      {
        env: { RUNNER_DATA_DIR: master.dataDir },
      },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string } & Partial<ApiTask>);
    expect(lines[lines.length - 1]).toMatchObject({ type: 'summary', status: 'succeeded' });
    expect(lines.filter((l) => l.type === 'task').pop()).toMatchObject({
      name: 'where',
      agent: 'a3',
      status: 'succeeded',
      message: 'ran with port 9093',
    });
    expect(output(agents.a3)).toMatch(/running task where of local/);
  });

  it('asks on a terminal before a run reaches agents, and runs nothing unless told yes (--yes skips it)', async () => {
    const file = join(tempDataDir('runner-e2e-ask-'), 'ask.yaml');
    writeFileSync(
      file,
      'version: "1.0"\ntasks:\n  - name: asked\n    delegate_to: a1\n    exec:\n      script: return true, "confirmed"\n',
    );
    // util-linux `script` gives the command a pseudo-terminal; the answer is typed into it.
    const onTerminal = async (workflowName: string, answer: string, extra: string[] = []) => {
      const command = [process.execPath, runnerBin, 'run', workflowName, '--file', file, ...extra]
        .map((a) => JSON.stringify(a))
        .join(' ');
      const child = spawn('script', ['-qefc', command, '/dev/null'], {
        env: { ...process.env, RUNNER_DATA_DIR: master.dataDir, NO_COLOR: '1', TERM: 'xterm' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stdin.end(answer);
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      return { code, out };
    };
    const no = await onTerminal('ask-no', 'n\n');
    // The question names the tasks and their agents (a terminal writes \r\n).
    expect(no.out).toMatch(
      /Run ask-no on agents\? This task executes on remote hosts:\r?\n {2}asked {2}on a1\r?\n\[y\/N\] /,
    );
    expect(no.out).toContain('runner: not confirmed; nothing ran');
    expect(no.code).toBe(1);
    expect(output(agents.a1)).not.toMatch(/running task asked of ask-no/);

    const yes = await onTerminal('ask-yes', 'y\n');
    expect(yes.code).toBe(0);
    expect(yes.out).toContain('confirmed');
    expect(output(agents.a1)).toMatch(/running task asked of ask-yes/);

    const skipped = await onTerminal('ask-skip', '', ['--yes']);
    expect(skipped.code).toBe(0);
    expect(skipped.out).not.toContain('[y/N]');
  });

  it('RUNNER_MASTER_ADDR names the master for `runner run` from anywhere; an unknown agent fails before anything runs', async () => {
    const dir = tempDataDir('runner-e2e-ci-');
    const file = join(dir, 'ci.yaml');
    writeFileSync(
      file,
      'version: "1.0"\ntasks:\n  - name: where\n    exec:\n      script: return true, "port " .. values.port\nvalues: { a2: { port: 9092 } }\n',
    );
    // Another data directory, as on a CI runner: only the master's gRPC address and an API token are known.
    const env = { RUNNER_DATA_DIR: dir, RUNNER_MASTER_ADDR: master.grpc, RUNNER_TOKEN: await ciToken(master, 'ci') };
    const ok = await runRunner(['run', 'ci', '--file', file, '--delegate-to', 'a2', '--yes', '--output', 'json'], {
      env,
    });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('"agent":"a2"');
    expect(ok.stdout).toContain('"message":"port 9092"');

    const ghost = await runRunner(['run', 'ci-ghost', '--file', file, '--delegate-to', 'ghost', '--yes'], { env });
    // Refused by the master before the run is recorded (issue 10): a usage error, as embedded.
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).toContain('delegate_to: unknown agent "ghost"');
    for (const name of ['a1', 'a2', 'a3']) expect(output(agents[name])).not.toMatch(/running task where of ci-ghost/);
  });

  it("streams a delegated task's log lines back while the task still runs", async () => {
    const gate = join(tempDataDir('runner-e2e-gate-'), 'open');
    const id = await submit(
      master,
      `version: "1.0"
tasks:
  - name: slow
    delegate_to: a1
    exec:
      script: |
        log.info("first line")
        while not io.open("${gate}") do exec.run("sleep 0.02") end
        log.info("second line")
        return true
`,
    );
    // The first line is in the run's record while the script waits for the gate.
    await vi.waitFor(
      async () => {
        const running = (await (await master.fetch(`${master.base}/executions/${id}`)).json()) as ApiRun;
        expect(running.status).toBe('running');
        expect(running.tasks[0]?.log?.map((l) => l.message)).toContain('first line');
      },
      { timeout: 10_000, interval: 25 },
    );
    writeFileSync(gate, '');
    const done = await finishedRun(master, id);
    expect(done.status).toBe('succeeded');
    expect(done.tasks[0].log?.map((l) => l.message)).toEqual(expect.arrayContaining(['first line', 'second line']));
  });

  it('a silent agent goes offline after the heartbeat timeout, and comes back when it speaks again', async () => {
    const from = output(master.child).length;
    const stoppedAt = Date.now();
    agents.a2.kill('SIGSTOP');
    try {
      await waitFor(master.child, /agent a2 disconnected: no heartbeat for \d/, { from, timeoutMs: 8000 });
      // The timeout runs from the last heartbeat, up to one interval (0.2 s) before the stop.
      const silentFor = Date.now() - stoppedAt;
      expect(silentFor).toBeGreaterThanOrEqual(1700);
      expect(silentFor).toBeLessThan(5000);
      const refused = await run(
        master,
        `version: "1.0"\ntasks:\n  - name: t\n    delegate_to: a2\n    exec: { script: return true }\n`,
      );
      expect(refused.status).toBe('failed');
      expect(refused.tasks[0].message).toMatch(/agent "a2" is offline/);
    } finally {
      agents.a2.kill('SIGCONT');
    }
    await waitFor(master.child, /agent a2 connected from/, { from });
    const back = await run(
      master,
      `version: "1.0"\ntasks:\n  - name: t\n    delegate_to: a2\n    exec:\n      script: return true, "back"\n`,
    );
    expect(back.tasks[0]).toMatchObject({ status: 'succeeded', message: 'back' });
  });

  it('an agent killed mid-task fails the task at once; the run does not hang', async () => {
    const victim = await startAgent(master, 'victim');
    const marker = join(tempDataDir('runner-e2e-marker-'), 'started');
    const id = await submit(
      master,
      `version: "1.0"
tasks:
  - name: long
    delegate_to: victim
    exec:
      script: |
        local f = io.open("${marker}", "w"); f:write("x"); f:close()
        exec.run("sleep 30")
        return true
`,
    );
    const deadline = Date.now() + 15_000;
    while (!existsSync(marker) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(marker)).toBe(true);
    victim.kill('SIGKILL');
    const result = await finishedRun(master, id, 10_000);
    expect(result.status).toBe('failed');
    // At once: the stream breaks with the process; the heartbeat timeout would say "no heartbeat".
    expect(result.tasks[0]).toMatchObject({
      status: 'failed',
      message: expect.stringMatching(/agent victim was lost while running the task: (?!no heartbeat)/),
    });
  });

  it('a restarted master gets its agents back, untouched', async () => {
    const pids = Object.fromEntries(['a1', 'a2', 'a3'].map((n) => [n, agents[n].pid]));
    const port = Number(master.grpc.split(':')[1]);
    master.child.kill('SIGTERM');
    expect((await finished(master.child)).code).toBe(0);
    for (const name of ['a1', 'a2', 'a3']) await waitFor(agents[name], /lost the master/, { from: 0 });
    master = await startMaster(master.dataDir, { port });
    for (const name of ['a1', 'a2', 'a3']) await waitFor(master.child, new RegExp(`agent ${name} connected from`));
    const result = await run(
      master,
      `version: "1.0"\ntasks:\n  - name: again\n    delegate_to: [a1, a2, a3]\n    exec: { script: return true }\n`,
    );
    expect(result.status).toBe('succeeded');
    for (const name of ['a1', 'a2', 'a3']) {
      expect(agents[name].exitCode).toBeNull();
      expect(agents[name].pid).toBe(pids[name]);
    }
  }, 60_000);
});

describe('security', () => {
  let master: Master;
  beforeAll(async () => {
    master = await startMaster(tempDataDir('runner-e2e-master-'));
  }, 30_000);

  it('a wrong token is refused on both sides and nothing is registered', async () => {
    const from = output(master.child).length;
    const agent = spawnAgent(master, 'intruder', ['--token', 'rjt_not-the-token']);
    const done = await finished(agent);
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(new RegExp(`runner: master ${master.grpc} refused agent intruder: wrong join token`));
    expect(output(master.child).slice(from)).toMatch(/refused agent intruder from 127\.0\.0\.1:\d+: wrong join token/);
    expect(output(master.child)).not.toMatch(/agent intruder connected/);
    const missing = spawnAgent(master, 'anonymous', [], { RUNNER_JOIN_TOKEN: '' });
    expect((await finished(missing)).stderr).toMatch(/refused agent anonymous: no join token presented/);
  });

  it('`runner agent token create` makes a token agents can join with; show prints it', async () => {
    const dataDir = tempDataDir('runner-e2e-token-');
    const created = await runRunner(['agent', 'token', 'create'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^rjt_/);
    expect(created.stderr).toMatch(/join token written to .*agent-token/);
    expect((await runRunner(['agent', 'token', 'create'], { env: { RUNNER_DATA_DIR: dataDir } })).stderr).toMatch(
      /already exists.*--force/,
    );
    expect((await runRunner(['agent', 'token', 'show'], { env: { RUNNER_DATA_DIR: dataDir } })).stdout.trim()).toBe(
      token,
    );
    const own = await startMaster(dataDir);
    expect(own.token).toBe(token);
    await startAgent(own, 'joined', ['--token', token], { RUNNER_JOIN_TOKEN: '' });
  });

  it('TLS: an agent trusting the master certificate connects; one without it cannot', async () => {
    const dir = tempDataDir('runner-e2e-tls-');
    const { cert, key } = selfSignedCert(dir, 'master');
    // gRPC's own pair (grpc.tls_*): --tls-cert would serve the REST API over HTTPS too (test/e2e/https.test.ts).
    const tls = await startMaster(tempDataDir('runner-e2e-master-'), {
      env: { RUNNER_GRPC_TLS_CERT: cert, RUNNER_GRPC_TLS_KEY: key },
    });
    expect(output(tls.child)).toMatch(/gRPC listening on 127\.0\.0\.1:\d+ \(TLS\)/);
    await startAgent(tls, 'secure', ['--master-tls-cert', cert]);
    const result = await run(
      tls,
      `version: "1.0"\ntasks:\n  - name: t\n    delegate_to: secure\n    exec:\n      script: return true, "over tls"\n`,
    );
    expect(result.tasks[0]).toMatchObject({ status: 'succeeded', message: 'over tls' });

    // Plaintext against a TLS master never registers; with a retry limit the agent gives up.
    const plain = spawnAgent(tls, 'plain', [], { RUNNER_AGENT_RECONNECT_MAX_RETRIES: '2' });
    const done = await finished(plain);
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(/runner: gave up connecting to master 127\.0\.0\.1:\d+ after 2 failed attempts/);
    expect(output(tls.child)).not.toMatch(/agent plain connected/);

    // Trusting another certificate is no better than trusting none.
    const other = selfSignedCert(dir, 'other');
    const stranger = spawnAgent(tls, 'stranger', ['--master-tls-cert', other.cert], {
      RUNNER_AGENT_RECONNECT_MAX_RETRIES: '2',
    });
    const refused = await finished(stranger);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/self[- ]signed certificate/);
    expect(output(tls.child)).not.toMatch(/agent stranger connected/);

    // RUNNER_MASTER_ADDR with the master's certificate: `runner run` finds the REST API over TLS.
    const wf = join(dir, 'wf.yaml');
    writeFileSync(
      wf,
      'version: "1.0"\ntasks:\n  - name: t\n    exec:\n      script: return true, "via grpc address"\n',
    );
    const env = {
      RUNNER_DATA_DIR: tempDataDir('runner-e2e-ci-'),
      RUNNER_MASTER_ADDR: tls.grpc,
      RUNNER_TOKEN: await ciToken(tls, 'ci-tls'),
    };
    const viaTls = await runRunner(['run', 'ci', '--file', wf, '--output', 'json'], {
      env: { ...env, RUNNER_MASTER_TLS_CERT: cert },
    });
    expect(viaTls.stderr).toBe('');
    expect(viaTls.code).toBe(0);
    expect(viaTls.stdout).toContain('"message":"via grpc address"');
    const untrusted = await runRunner(['run', 'ci', '--file', wf], { env });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(new RegExp(`^runner: master ${tls.grpc}: `));
    // Seven processes started one after the other: on a loaded 2-core machine this takes a while.
  }, 90_000);
});

describe('the agents REST API and WebSocket, against real agents', () => {
  let master: Master;
  const agents: Record<string, Child> = {};
  beforeAll(async () => {
    master = await startMaster(tempDataDir('runner-e2e-master-'));
    [agents.ops1, agents.ops2] = await Promise.all([startAgent(master, 'ops1'), startAgent(master, 'ops2')]);
  }, 60_000);

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await master.fetch(`${master.base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
  };

  it('lists and describes the agents, and reads their host: metrics, processes, network, disk', async () => {
    // A busy host (CPU above 80%) shows connected agents as `warning`: both count as up here.
    const list = await api('GET', '/agents?status=online,warning&limit=1');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, limit: 1, offset: 0 });
    expect((list.body!.agents as unknown[]).length).toBe(1);
    expect((await api('GET', '/agents/ops1')).body).toMatchObject({ name: 'ops1', status: expect.any(String) });
    // The agents run on this host, so their figures are this host's.
    const metrics = (await api('GET', '/agents/ops1/metrics')).body as { cpu: { cores: number; load_avg: number[] } };
    expect(metrics.cpu.cores).toBe(cpus().length);
    expect(metrics.cpu.load_avg).toHaveLength(3);
    const processes = (await api('GET', '/agents/ops1/processes')).body as { processes: { pid: number }[] };
    expect(processes.processes.map((p) => p.pid)).toContain(agents.ops1.pid);
    const network = (await api('GET', '/agents/ops1/network')).body as { interfaces: { name: string }[] };
    expect(network.interfaces.map((i) => i.name)).toContain('lo');
    const disk = (await api('GET', '/agents/ops1/disk')).body as { disks: { total_bytes: number }[] };
    expect(disk.disks.length).toBeGreaterThan(0);
    expect((await api('GET', '/agents/nobody/metrics')).status).toBe(404);
  });

  it('runs a command on the agent, with its output, exit code and a timeout', async () => {
    const ran = await api('POST', '/agents/ops1/exec', { command: 'echo $PPID; echo oops >&2; exit 3' });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ stdout: `${agents.ops1.pid}\n`, stderr: 'oops\n', exit_code: 3 });
    const slow = await api('POST', '/agents/ops1/exec', { command: 'sleep 5', timeout: '300ms' });
    expect(slow.body).toMatchObject({ timed_out: true });
    expect((await api('POST', '/agents/ops1/exec', { command: 42 })).status).toBe(400);
  });

  it("streams the agent's log as server-sent events, live", async () => {
    const controller = new AbortController();
    const response = await master.fetch(`${master.base}/agents/ops1/logs/stream`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until(/registered with master/);
    // A line the agent logs from now on arrives on the open stream.
    await api('POST', '/agents/ops1/exec', { command: 'true # marker-7731' });
    await until(/running a command for the master: true # marker-7731/);
    const event = text.split('\n').find((line) => line.includes('marker-7731'))!;
    expect(JSON.parse(event.replace(/^data: /, ''))).toMatchObject({ level: 'INFO', timestamp: expect.any(String) });
    controller.abort();
  });

  it('restarts an agent (agent_update on the WebSocket as it goes and comes back), then removes one', async () => {
    const socket = new WebSocket(`${master.base.replace('http', 'ws')}/ws`, { headers: localAuth(master.dataDir) });
    const updates: { status: string }[] = [];
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; data: { name: string; status: string } };
      if (message.type === 'agent_update' && message.data.name === 'ops2') updates.push(message.data);
    });
    await new Promise((resolve) => socket.once('open', resolve));
    const oldPid = agents.ops2.pid;
    const from = output(master.child).length;
    const restart = await api('POST', '/agents/ops2/restart');
    expect(restart.status).toBe(202);
    await waitFor(master.child, /agent ops2 disconnected/, { from });
    await waitFor(master.child, /agent ops2 connected from/, { from });
    await vi.waitFor(() => expect(updates.map((u) => u.status)).toEqual(expect.arrayContaining(['offline', 'online'])));
    const processes = (await api('GET', '/agents/ops2/processes')).body as { processes: { pid: number }[] };
    // The process started stays as the agent's supervisor (nothing is left detached); the agent
    // that registered again is the new process it started.
    const newPid = Number(/restarting as pid (\d+)/.exec(output(agents.ops2))?.[1]);
    expect(newPid).not.toBe(oldPid);
    expect(processes.processes.map((p) => p.pid)).toContain(newPid);

    expect((await api('DELETE', '/agents/ops2')).status).toBe(204);
    expect((await api('GET', '/agents/ops2')).status).toBe(404);
    socket.close();
  });
});
