// The CLI's management commands against a real master stand-in: the real HTTP plugin and this
// plugin over a fake registry, found through master.json as a user's CLI finds a local master.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CommandContext, CommandInput, RunnerError } from '@runner/plugin-sdk';
import { staticConfig } from '@runner/plugin-sdk/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRegistry, fakeAgent, fakeMetrics } from './fake-registry.js';
import { startTestMaster, type TestMaster } from './test-master.js';
import { agentCommand } from './commands.js';

// The subcommands as the CLI runs them (built by resourceCommand from the routes).
type Run = (input: CommandInput, ctx: CommandContext) => Promise<number | void>;
const sub = (name: string) => agentCommand.subcommands!.find((c) => c.name === name)!.run as Run;
const commands = {
  listCommand: sub('list'),
  getCommand: sub('get'),
  modulesCommand: sub('modules'),
  stopCommand: sub('stop'),
  restartCommand: sub('restart'),
  removeCommand: sub('remove'),
  revokeCommand: sub('revoke'),
  metricsCommand: sub('metrics'),
};

const masters: TestMaster[] = [];
afterEach(async () => {
  for (const m of masters.splice(0)) await m.kernel.stop();
});

interface Ran {
  code: number | void;
  stdout: string;
  stderr: string;
}

function context(dataDir: string, values: Record<string, unknown> = {}, isTTY = false) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const noop = () => {};
  const logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => logger };
  const ctx = {
    config: staticConfig(values, dataDir),
    logger,
    stdout,
    stderr,
    stdin: new PassThrough(),
    isTTY,
    plugins: [],
    commands: [],
    boot: () => Promise.reject(new Error('no boot in these tests')),
    version: '0.0.0-test',
  } as unknown as CommandContext;
  return { ctx, output: () => ({ stdout: out, stderr: err }) };
}

async function run(
  command: (input: CommandInput, ctx: CommandContext) => Promise<number | void>,
  dataDir: string,
  args: string[],
  options: Record<string, unknown> = {},
  extra: { values?: Record<string, unknown>; isTTY?: boolean } = {},
): Promise<Ran> {
  const { ctx, output } = context(dataDir, extra.values, extra.isTTY);
  const code = await command({ args, options: { output: 'text', ...options } }, ctx);
  return { code, ...output() };
}

async function failure(promise: Promise<unknown>): Promise<RunnerError> {
  try {
    await promise;
  } catch (error) {
    return error as RunnerError;
  }
  throw new Error('expected the command to fail');
}

async function master(
  registry = new FakeRegistry([
    fakeAgent('web-1', { labels: { env: 'prod' } }),
    fakeAgent('db-1', { status: 'offline', cpu_usage: 0 }),
  ]),
) {
  const m = await startTestMaster(registry);
  masters.push(m);
  return { ...m, registry };
}

describe('agent list', () => {
  it('prints a table of the agents of the local master (found through master.json)', async () => {
    const { dataDir } = await master();
    const { code, stdout } = await run(commands.listCommand, dataDir, []);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+ADDRESS\s+CPU\s+MEMORY\s+UPTIME\s+LAST HEARTBEAT\s+ENROLLED$/);
    expect(lines[1]).toMatch(/^db-1\s+offline\s+10\.0\.0\.5:41234\s+0\.0%\s+40\.3%\s+1h 2m\s+\d+s ago\s+no$/);
    expect(lines[2]).toMatch(/^web-1\s+online\s+/);
  });

  it('passes filters to the master and prints JSON with --output json', async () => {
    const { dataDir } = await master();
    const { stdout } = await run(commands.listCommand, dataDir, [], {
      status: 'online',
      label: 'env=prod',
      output: 'json',
    });
    const parsed = JSON.parse(stdout);
    expect(parsed.total).toBe(1);
    expect(parsed.agents[0].name).toBe('web-1');
    const none = await run(commands.listCommand, dataDir, [], { name: 'zzz' });
    expect(none.stdout).toBe('no agent matches\n');
  });

  it('says so when the master refuses a filter (exit code 2 for the 400)', async () => {
    const { dataDir } = await master();
    const error = await failure(run(commands.listCommand, dataDir, [], { status: 'sleeping' }));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^status must be one of online, offline, warning, error/);
  });
});

describe('agent get, modules, stop, restart, remove', () => {
  it('shows one agent, as text or JSON', async () => {
    const { dataDir } = await master();
    const text = await run(commands.getCommand, dataDir, ['web-1']);
    expect(text.stdout).toMatch(/^name {11}web-1$/m);
    expect(text.stdout).toMatch(/^labels {9}env=prod$/m);
    const json = await run(commands.getCommand, dataDir, ['web-1'], { output: 'json' });
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'web-1', status: 'online' });
    const missing = await failure(run(commands.getCommand, dataDir, ['nope']));
    expect(missing.status).toBe(404);
    expect(missing.message).toMatch(/^agent "nope" does not exist$/);
  });

  it('lists modules sorted', async () => {
    const { dataDir } = await master();
    expect((await run(commands.modulesCommand, dataDir, ['web-1'])).stdout).toBe('exec\nfacts\nfile\n');
    // JSON is the route's answer (the agent), as for every command.
    const json = JSON.parse((await run(commands.modulesCommand, dataDir, ['web-1'], { output: 'json' })).stdout);
    expect([...json.modules].sort()).toEqual(['exec', 'facts', 'file']);
  });

  it('asks the agent to stop or restart through the master, and removes it', async () => {
    const { dataDir, registry } = await master();
    expect((await run(commands.stopCommand, dataDir, ['web-1'])).stdout).toBe('agent web-1 is stopping\n');
    expect((await run(commands.restartCommand, dataDir, ['web-1'])).stdout).toMatch(/^agent web-1 is restarting/);
    expect(registry.calls.map((c) => c.method)).toEqual(['stop', 'restart']);
    const offline = await failure(run(commands.restartCommand, dataDir, ['db-1']));
    expect(offline.status).toBe(503);
    expect(offline.message).toMatch(/^agent "db-1" is offline/);
    await run(commands.removeCommand, dataDir, ['web-1']);
    expect(registry.agents.has('web-1')).toBe(false);
  });

  it('revokes an agent through the master and says how to free the name', async () => {
    const { dataDir, registry } = await master();
    const { stdout } = await run(commands.revokeCommand, dataDir, ['web-1']);
    expect(stdout).toMatch(
      /^agent web-1: credential revoked at \d{4}-.*cannot reconnect \(`runner agent remove web-1`/,
    );
    expect(registry.get('web-1')).toMatchObject({ status: 'offline', revoked_at: expect.any(String) });
    expect((await failure(run(commands.revokeCommand, dataDir, ['nope']))).status).toBe(404);
  });
});

describe('agent metrics', () => {
  it('prints the metrics once', async () => {
    const { dataDir } = await master();
    const { stdout } = await run(commands.metricsCommand, dataDir, ['web-1']);
    expect(stdout).toMatch(/^cpu +12\.5% {2}4 cores, load 0\.50 0\.40 0\.30$/m);
    expect(stdout).toMatch(/^memory +25\.0% {2}2\.0 GiB of 8\.0 GiB$/m);
    expect(stdout).toMatch(/^network +rx 2\.0 KiB\/s, tx 512 B\/s$/m);
  });

  it('--watch off a terminal prints one line per sample', async () => {
    const { dataDir, registry } = await master(undefined);
    let n = 0;
    registry.metricsValue = () => fakeMetrics(++n);
    const { code, stdout } = await run(commands.metricsCommand, dataDir, ['web-1'], {
      watch: true,
      interval: 0.01,
      count: 3,
    });
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).toMatch(
        /^\S+Z cpu 1\.0% load 0\.50 0\.40 0\.30 mem 25\.0% disk 40\.0% rx 2\.0 KiB\/s tx 512 B\/s procs 123$/,
      );
    }
    // Samples faster than the master's 5 s cache are its one answer of the period.
    expect(registry.calls.filter((c) => c.method === 'metrics')).toHaveLength(1);
  });

  it('--watch on a terminal redraws the view in place; --output json gives one object per line', async () => {
    const { dataDir } = await master();
    const tty = await run(
      commands.metricsCommand,
      dataDir,
      ['web-1'],
      { watch: true, interval: 0.01, count: 2 },
      { isTTY: true },
    );
    expect(tty.stdout.split('\x1b[H\x1b[2J')).toHaveLength(3);
    expect(tty.stdout).toMatch(/every 0\.01 s from http:\/\/127\.0\.0\.1:\d+; Ctrl-C stops/);
    const json = await run(commands.metricsCommand, dataDir, ['web-1'], {
      watch: true,
      interval: 0.01,
      count: 2,
      output: 'json',
    });
    const objects = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(objects).toHaveLength(2);
    expect(objects[0].cpu.usage_percent).toBe(12.5);
  });

  it('--watch goes on through failed samples, and fails if none succeeded', async () => {
    const { dataDir } = await master();
    const { code, stderr, stdout } = await run(commands.metricsCommand, dataDir, ['db-1'], {
      watch: true,
      interval: 0.01,
      count: 2,
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(2);
    expect(stderr).toMatch(/agent "db-1" is offline/);
    await expect(
      run(commands.metricsCommand, dataDir, ['nope'], { watch: true, interval: 0.01, count: 2 }),
    ).rejects.toThrow(/agent "nope" does not exist/);
  });
});

describe('finding the master', () => {
  it('says where it looked when there is no master', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-cli-'));
    const error = await failure(run(commands.listCommand, dataDir, []));
    expect(error.code).toBe('master_unreachable');
    expect(error.message).toBe(
      `no master found: --master-url not given; master.url not set (config file or RUNNER_MASTER_URL); ${dataDir}/master.json does not exist (no master runs with data directory ${dataDir}); ` +
        'master.address not set (config file or RUNNER_MASTER_ADDR). ' +
        'Start one with `runner server`, or point at one with --master-url http://host:8080',
    );
  });

  it('notices a master.json left by a master that is gone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'runner-cli-'));
    // A pid that cannot be running: above the kernel's pid_max.
    writeFileSync(join(dataDir, 'master.json'), JSON.stringify({ pid: 2 ** 22 + 1, http: '127.0.0.1:8080' }));
    const error = await failure(run(commands.listCommand, dataDir, []));
    expect(error.message).toMatch(/master\.json names process 4194305, which is not running/);
  });

  it('uses --master-url, then config master.url (RUNNER_MASTER_URL), before master.json', async () => {
    const { base } = await master();
    const empty = mkdtempSync(join(tmpdir(), 'runner-cli-'));
    const viaFlag = await run(commands.getCommand, empty, ['web-1'], { masterUrl: `${base}/api/v1/`, output: 'json' });
    expect(JSON.parse(viaFlag.stdout).name).toBe('web-1');
    const viaConfig = await run(
      commands.getCommand,
      empty,
      ['web-1'],
      { output: 'json' },
      { values: { 'master.url': base } },
    );
    expect(JSON.parse(viaConfig.stdout).name).toBe('web-1');
  });

  it('names the URL and its source when the master does not answer', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => resolve(p));
      });
    });
    const empty = mkdtempSync(join(tmpdir(), 'runner-cli-'));
    const error = await failure(run(commands.listCommand, empty, [], { masterUrl: `http://127.0.0.1:${port}` }));
    expect(error.message).toBe(
      `cannot reach the master at http://127.0.0.1:${port}/api/v1/agents (from --master-url): connection refused; is \`runner server\` running there, on that port?`,
    );
    const bad = await failure(run(commands.listCommand, empty, [], { masterUrl: 'ftp://x' }));
    expect(bad.message).toMatch(/--master-url: "ftp:\/\/x" must be an http/);
  });
});
