// The one door (issue 18 item 1): a master's local task scripts that reach the host run as
// engine.run_as, never as the master. A real `runner server` as root with its defaults (so the
// system user runner-exec), a Developer and an Operator submitting over REST, the CLI through the
// master; and a master that is not root, which refuses such tasks and says how to allow them.
import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  localAuth,
  runnerBin,
  runRunner,
  sleepsWith,
  spawnRunner,
  stopAll,
  tempDataDir,
  waitForOutput,
} from './helpers.js';
import { lookUpUser } from '../../plugins/engine/src/run-as.js';

const isRoot = process.getuid?.() === 0;
const children: ReturnType<typeof spawnRunner>[] = [];

afterAll(() => stopAll(children, 'SIGTERM'));

/** Every way the language offers to read or change a file, each aimed at `target`; each task ignores its error. */
function attacks(target: string, outDir: string): string {
  const task = (name: string, script: string) =>
    [
      `  - name: ${name}`,
      '    ignore_errors: true',
      '    exec:',
      '      script: |',
      ...script.split('\n').map((line) => `        ${line}`),
    ].join('\n');
  return [
    'version: "1.0"',
    'tasks:',
    task('pure', 'return true, "pure " .. tostring(1 + 1)'),
    task(
      'io_open',
      `local f, err = io.open("${target}", "r")\nif not f then return false, err end\nreturn true, f:read("a")`,
    ),
    task('io_popen', `local p = io.popen("cat ${target} 2>&1")\nlocal out = p:read("a")\np:close()\nreturn false, out`),
    task(
      'os_execute',
      `local ok, how, code = os.execute("cat ${target}")\nreturn ok == true, "os.execute: " .. tostring(how) .. " " .. tostring(code)`,
    ),
    task('os_remove', `local ok, err = os.remove("${target}")\nreturn ok == true, err`),
    task('exec_run', `local r = exec.run("cat ${target}")\nreturn r.success, r.stdout .. r.stderr`),
    task('file_read', `return true, file.read("${target}")`),
    task('template_file', `return true, template.render_file("${target}")`),
    task('env', 'return true, "HOME=" .. tostring(os.getenv("HOME")) .. " env.HOME=" .. tostring(env.HOME)'),
    task(
      'identity',
      `local r = exec.run("id -un")\nlocal f = assert(io.open("${outDir}/written", "w"))\nf:write("x")\nf:close()\nreturn r.success, r.stdout`,
    ),
  ].join('\n');
}

interface Task {
  name: string;
  status: string;
  message?: string;
}

describe.skipIf(!isRoot)('a root master runs local side effects as runner-exec', () => {
  let dataDir: string;
  let base: string;
  let secrets: string[];
  let outDir: string;
  let devToken: string;
  let masterPid: number;
  const basic = (user: string) => `Basic ${Buffer.from(`${user}:${user}-password-1`).toString('base64')}`;

  beforeAll(async () => {
    dataDir = tempDataDir('runner-runas-');
    // A data directory a careless umask left open: the master makes it its own (0700).
    chmodSync(dataDir, 0o755);
    const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
    children.push(child);
    masterPid = child.pid as number;
    const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 30_000);
    base = `http://${address}`;
    await waitForOutput(child, /local tasks with side effects run as user runner-exec/);
    secrets = ['auth/admin.password', 'auth/jwt.secret', 'auth/local.token'].map((f) =>
      readFileSync(join(dataDir, f), 'utf8').trim(),
    );
    for (const [user, role] of [
      ['dev', 'developer'],
      ['op', 'operator'],
    ]) {
      const file = join(dataDir, `${user}-pw`);
      writeFileSync(file, `${user}-password-1\n`);
      const added = await runRunner(['user', 'add', user, '--role', role, '--password-file', file], {
        env: { RUNNER_DATA_DIR: dataDir },
      });
      expect(added.code, added.stderr).toBe(0);
    }
    const created = await fetch(`${base}/api/v1/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...localAuth(dataDir) },
      body: JSON.stringify({ name: 'dev-cli', role: 'developer' }),
    });
    devToken = ((await created.json()) as { token: string }).token;
    outDir = tempDataDir('runner-runas-out-');
    chmodSync(outDir, 0o777);
  }, 60_000);

  it('makes the data directory private and creates the system user', () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const account = lookUpUser('runner-exec');
    expect(account?.uid).toBeGreaterThan(0);
  });

  async function runAs(authorization: string, target: string): Promise<{ tasks: Task[]; raw: string }> {
    const started = await fetch(`${base}/api/v1/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ workflow_name: 'attacks', content: attacks(target, outDir) }),
    });
    expect(started.status, await started.clone().text()).toBe(202);
    const { id } = (await started.json()) as { id: string };
    for (let i = 0; i < 600; i++) {
      const answer = await fetch(`${base}/api/v1/executions/${id}`, { headers: { authorization } });
      const raw = await answer.text();
      const run = JSON.parse(raw) as { status: string; tasks: Task[] };
      if (run.status !== 'running' && run.status !== 'pending') {
        const log = await fetch(`${base}/api/v1/executions/${id}/log`, { headers: { authorization } });
        return { tasks: run.tasks, raw: raw + (await log.text()) };
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`run ${id} did not end within 60 s`);
  }

  function expectRefused(tasks: Task[], target: string): void {
    const by = Object.fromEntries(tasks.map((t) => [t.name, t]));
    expect(by.pure).toMatchObject({ status: 'succeeded', message: 'pure 2' });
    for (const name of ['io_open', 'io_popen', 'os_remove', 'exec_run', 'file_read', 'template_file']) {
      expect(by[name].status, name).toBe('ignored');
      // Each names what was refused: the file and the kernel's answer.
      expect(by[name].message, name).toContain(target);
      expect(by[name].message, name).toMatch(/permission denied|EACCES/i);
    }
    expect(by.os_execute).toMatchObject({ status: 'ignored', message: 'os.execute: exit 1' });
    expect(by.env.message).toContain('HOME=');
    expect(by.identity).toMatchObject({ status: 'succeeded', message: 'runner-exec\n' });
  }

  for (const [role, user] of [
    ['Developer', 'dev'],
    ['Operator', 'op'],
  ]) {
    it(`as ${role}, a run over REST cannot read or remove the master's key files`, async () => {
      for (const file of ['auth/admin.password', 'auth/jwt.secret', 'auth/local.token']) {
        const target = join(dataDir, file);
        const { tasks, raw } = await runAs(basic(user), target);
        expectRefused(tasks, target);
        for (const secret of secrets) expect(raw).not.toContain(secret);
        expect(readFileSync(target, 'utf8').trim().length).toBeGreaterThan(0);
      }
      // What it wrote where it may write belongs to runner-exec, not to the master's root.
      expect(statSync(join(outDir, 'written')).uid).toBe(lookUpUser('runner-exec')?.uid);
    }, 120_000);
  }

  it("finds no way around: the master's /proc entries, its root's view, inherited descriptors", async () => {
    const pid = masterPid;
    const jwt = join(dataDir, 'auth', 'jwt.secret');
    const task = (name: string, script: string) =>
      `  - name: ${name}\n    ignore_errors: true\n    exec:\n      script: |\n${script
        .split('\n')
        .map((line) => `        ${line}`)
        .join('\n')}`;
    const content = [
      'version: "1.0"',
      'tasks:',
      task(
        'proc_environ',
        `local f, err = io.open("/proc/${pid}/environ", "r")\nif not f then return false, err end\nreturn true, f:read("a")`,
      ),
      task('proc_root', `local r = exec.run("cat /proc/${pid}/root${jwt}")\nreturn r.success, r.stdout .. r.stderr`),
      task('proc_cwd', `local r = exec.run("ls /proc/${pid}/cwd/")\nreturn r.success, r.stdout .. r.stderr`),
      task('proc_fd', `local r = exec.run("ls /proc/${pid}/fd/")\nreturn r.success, r.stdout .. r.stderr`),
      task('env_i', `local r = exec.run("env -i /bin/cat ${jwt}")\nreturn r.success, r.stdout .. r.stderr`),
      task('fds', 'local r = exec.run("ls -l /proc/self/fd/")\nreturn r.success, r.stdout'),
    ].join('\n');
    const started = await fetch(`${base}/api/v1/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic('dev') },
      body: JSON.stringify({ workflow_name: 'escapes', content }),
    });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    let run = { status: 'running', tasks: [] as Task[] };
    let raw = '';
    for (let i = 0; i < 600 && run.status === 'running'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      raw = await (await fetch(`${base}/api/v1/executions/${id}`, { headers: { authorization: basic('dev') } })).text();
      run = JSON.parse(raw) as typeof run;
    }
    const by = Object.fromEntries(run.tasks.map((t) => [t.name, t]));
    for (const name of ['proc_environ', 'proc_root', 'proc_cwd', 'proc_fd', 'env_i']) {
      expect(by[name].status, name).toBe('ignored');
      expect(by[name].message, name).toMatch(/permission denied|EACCES/i);
    }
    expect(by.proc_environ.message).toContain(`/proc/${pid}/environ`);
    // A command's descriptors: its standard streams (/dev/null, the socket pairs its output is
    // read from), the directory `ls` opened, and what this test's process itself holds (inherited
    // from whatever started it: runner passes those on, see the report); nothing of runner's own.
    expect(by.fds.status).toBe('succeeded');
    const outside = new Set(readdirSync('/proc/self/fd').map((fd) => safeReadlink(`/proc/self/fd/${fd}`)));
    const held = (by.fds.message ?? '')
      .split('\n')
      .map((line) => /\s(\d+) -> (.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null);
    expect(held.map((m) => m[1])).toEqual(expect.arrayContaining(['0', '1', '2']));
    for (const [, fd, target] of held) {
      expect(target).not.toContain(dataDir);
      if (Number(fd) > 2 && !/^\/proc\/\d+\/fd$/.test(target))
        expect(outside.has(target), `fd ${fd} -> ${target}`).toBe(true);
    }
    for (const secret of secrets) expect(raw).not.toContain(secret);
  }, 120_000);

  it('a run through the CLI (a Developer token) meets the same door', async () => {
    const target = join(dataDir, 'auth', 'jwt.secret');
    const file = join(outDir, 'attacks.yaml');
    writeFileSync(file, attacks(target, outDir));
    const result = await runRunner(['run', 'attacks', '--file', file, '--verbose'], {
      env: { RUNNER_DATA_DIR: dataDir, RUNNER_TOKEN: devToken },
    });
    const output = result.stdout + result.stderr;
    expect(result.code, output).toBe(0);
    expect(output).toMatch(/io_open .*Permission denied/);
    expect(output).toMatch(/exec_run .*Permission denied/);
    for (const secret of secrets) expect(output).not.toContain(secret);
  }, 120_000);
});

describe.skipIf(!isRoot)('a master that is not root', () => {
  it('refuses local side effects with how to allow them, and still runs pure scripts', async () => {
    const account = lookUpUser('runner-exec') ?? lookUpUser('nobody');
    if (!account) throw new Error('no unprivileged user to run the master as');
    const dataDir = join(tempDataDir('runner-runas-user-'), 'data');
    mkdirSync(dataDir);
    chownSync(dataDir, account.uid, account.gid);
    chmodSync(join(dataDir, '..'), 0o755);
    const child = spawn(process.execPath, [runnerBin, 'server', '--http-port', '0', '--port', '0'], {
      uid: account.uid,
      gid: account.gid,
      cwd: '/',
      env: { PATH: process.env.PATH, HOME: dataDir, RUNNER_DATA_DIR: dataDir, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }) as ReturnType<typeof spawnRunner>;
    child.output = { stdout: '', stderr: '' };
    child.stdout?.on('data', (d: Buffer) => (child.output.stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (child.output.stderr += d.toString()));
    children.push(child);
    const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 30_000);
    const by = await runOn(address, dataDir, 'refused', PURE_THEN_COMMAND('touch'));
    expect(by.pure).toMatchObject({ status: 'succeeded', message: 'fine' });
    expect(by.touch.status).toBe('failed');
    expect(by.touch.message).toMatch(/local tasks with side effects are refused: the master runs as \S+, not root/);
    expect(by.touch.message).toContain('engine.run_as: self');
  }, 60_000);
});

/** A pure task, then `name`, which starts a command. */
const PURE_THEN_COMMAND = (name: string) =>
  [
    'version: "1.0"',
    'tasks:',
    '  - name: pure',
    '    exec: { script: "return true, \'fine\'" }',
    `  - name: ${name}`,
    '    depends_on: [pure]',
    '    exec: { script: "exec.run(\'true\')" }',
  ].join('\n');

/** Runs a workflow on a master over REST with its local credential; the tasks once the run ended. */
async function runOn(address: string, dataDir: string, name: string, content: string): Promise<Record<string, Task>> {
  const headers = { 'content-type': 'application/json', ...localAuth(dataDir) };
  const started = await fetch(`http://${address}/api/v1/workflows/run`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ workflow_name: name, content }),
  });
  const { id } = (await started.json()) as { id: string };
  let run: { status: string; tasks: Task[] } = { status: 'running', tasks: [] };
  for (let i = 0; i < 600 && run.status === 'running'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    run = (await (await fetch(`http://${address}/api/v1/executions/${id}`, { headers })).json()) as typeof run;
  }
  return Object.fromEntries(run.tasks.map((t) => [t.name, t]));
}

/** A root master on a data directory of its own with a config file holding `config` (YAML). */
async function startConfigured(prefix: string, config: string): Promise<{ address: string; dataDir: string }> {
  const dataDir = tempDataDir(prefix);
  const file = join(tempDataDir(`${prefix}config-`), 'runner.yaml');
  writeFileSync(file, config);
  const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], {
    env: { RUNNER_DATA_DIR: dataDir, RUNNER_CONFIG: file },
  });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 30_000);
  return { address, dataDir };
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

describe.skipIf(!isRoot)('a root master whose disk has less free space than resources.disk.min_free', () => {
  it('refuses local side effects saying how much is free and what is asked, and still runs pure scripts', async () => {
    // 100 TiB must stay free: no disk here has it.
    const { address, dataDir } = await startConfigured(
      'runner-runas-disk-',
      `resources:\n  disk:\n    min_free: ${100 * 1024 * 1024}\n`,
    );
    const by = await runOn(address, dataDir, 'disk', PURE_THEN_COMMAND('command'));
    expect(by.pure).toMatchObject({ status: 'succeeded', message: 'fine' });
    expect(by.command.status).toBe('failed');
    expect(by.command.message).toMatch(
      new RegExp(
        `^refused: \\d+ MiB free on the file system of ${dataDir}, under resources.disk.min_free \\(104857600 MiB\\)`,
      ),
    );
  }, 60_000);
});

describe.skipIf(!isRoot)('a root master with resources.memory.limit and resources.cpu.limit', () => {
  it('holds its local tasks to them: a command past the memory is killed, a busy one is throttled', async () => {
    const { address, dataDir } = await startConfigured(
      'runner-runas-limits-',
      'resources:\n  memory:\n    limit: 256\n  cpu:\n    limit: 0.2\n',
    );
    const content = [
      'version: "1.0"',
      'tasks:',
      '  - name: small',
      '    exec:',
      '      script: |',
      `        local r = exec.run([[perl -e '$x = "x" x (16*1024*1024)']])`,
      '        return r.success, tostring(r.exit_code)',
      '  - name: big',
      '    ignore_errors: true',
      '    exec:',
      '      script: |',
      `        local r = exec.run([[perl -e '$x = "x" x (600*1024*1024)']])`,
      '        return r.success, tostring(r.exit_code)',
      '  - name: busy',
      '    exec:',
      '      script: |',
      '        exec.run("timeout 1 sh -c \'while :; do :; done\'")',
      '        local r = exec.run("cat /proc/self/cgroup")',
      '        return true, r.stdout',
    ].join('\n');
    const by = await runOn(address, dataDir, 'limits', content);
    expect(by.small, JSON.stringify(by.small)).toMatchObject({ status: 'succeeded', message: '0' });
    // Killed by the kernel at the cgroup's limit (SIGKILL: 128 + 9, or no exit code at all).
    expect(by.big.status, JSON.stringify(by.big)).toBe('ignored');
    // This host offers cgroup v1 memory and cpu to root (cgroup2 delegates no controller here).
    const cpuPath = /^\d+:[^:]*\bcpu\b[^:]*:(.*)$/m.exec(by.busy.message ?? '')?.[1];
    expect(cpuPath, by.busy.message).toMatch(/runner-[0-9a-f]{16}$/);
    const stat = readFileSync(`/sys/fs/cgroup/cpu${cpuPath}/cpu.stat`, 'utf8');
    expect(Number(/nr_throttled (\d+)/.exec(stat)?.[1])).toBeGreaterThan(0);
    expect(readFileSync(`/sys/fs/cgroup/cpu${cpuPath}/cpu.cfs_quota_us`, 'utf8').trim()).toBe('20000');
  }, 90_000);
});

describe.skipIf(!isRoot)('a root master killed with SIGKILL while runs start processes', () => {
  it('leaves none of them alive 10 s after it restarts, also ones that left their process group or cleared their environment', async () => {
    const dataDir = tempDataDir('runner-runas-kill-');
    const start = async () => {
      const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
      children.push(child);
      const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/, 30_000);
      return { child, base: `http://${address}` };
    };
    const marker = String(3000 + Math.floor(Math.random() * 100_000));
    const first = await start();
    const headers = { 'content-type': 'application/json', ...localAuth(dataDir) };
    // A third of the runs wait on their command; the others start one that leaves its group
    // (setsid), half of those with a cleared environment (env -i: no owner mark).
    const scripts = [
      `exec.run("sleep ${marker}")`,
      `os.execute("setsid sleep ${marker} > /dev/null 2>&1 &")`,
      `os.execute("env -i setsid sleep ${marker} > /dev/null 2>&1 &")`,
    ];
    const submitted: Promise<Response>[] = [];
    for (let i = 0; i < 100; i++) {
      const content = `version: "1.0"\ntasks:\n  - name: t\n    exec: { script: '${scripts[i % 3]}' }\n`;
      submitted.push(
        fetch(`${first.base}/api/v1/workflows/run`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ workflow_name: `spawn-${i}`, content }),
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 20)); // 50 a second
    }
    await Promise.allSettled(submitted);
    for (let i = 0; i < 200 && sleepsWith(marker).length < 20; i++) await new Promise((r) => setTimeout(r, 100));
    const before = sleepsWith(marker).length;
    expect(before).toBeGreaterThanOrEqual(20);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    await start();
    let left = sleepsWith(marker);
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = sleepsWith(marker);
    }
    expect(left, `${left.length} of ${before} sleeps alive 10 s after the restart`).toEqual([]);
  }, 120_000);
});
