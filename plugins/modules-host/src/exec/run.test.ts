import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectLauncher, HelperLauncher, type Launcher } from './launcher.js';
import { createExecModule, KILL_GRACE_MS, OUTPUT_CAP_BYTES } from './run.js';
import { luaCallContext } from '@runner/plugin-sdk/testing';

type Result = Record<string, any>;

/** True once the process is gone or a zombie nobody has reaped yet (PID 1 of a container may not). */
function dead(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return true;
  }
}

// Every behaviour holds for both ways of starting processes: through the helper process (what
// the plugin uses) and directly (its fallback).
describe.each([
  ['through the helper', () => new HelperLauncher(undefined, { directLaunches: 0 })],
  ['directly', () => new DirectLauncher()],
])('exec.run %s', (_label, makeLauncher: () => Launcher) => {
  let launcher: Launcher;
  let exec: ReturnType<typeof createExecModule>;
  let run: (...args: any[]) => Promise<Result>;

  beforeAll(() => {
    launcher = makeLauncher();
    exec = createExecModule(launcher);
    run = async (...args: any[]) => (await exec.run(luaCallContext().call, ...args)) as Result;
  });

  afterAll(() => launcher.close());

  it('runs a string through /bin/sh and reports the exit code without raising', async () => {
    const r = await run('echo hello; echo oops >&2; exit 3');
    expect(r).toMatchObject({ stdout: 'hello\n', stderr: 'oops\n', exit_code: 3, success: false });
    expect(r.duration).toBeGreaterThan(0);
    expect(r.timed_out).toBeUndefined();
  });

  it('starts a string of plain words naming a program by path without the shell, with the same meaning', async () => {
    // The program's parent is the launcher itself, not a /bin/sh in between.
    const status = await run('/bin/cat /proc/self/status');
    const ppid = /^PPid:\s+(\d+)$/m.exec(status.stdout)?.[1];
    expect(readFileSync(`/proc/${ppid}/comm`, 'utf8').trim()).not.toBe('sh');
    expect(await run('/bin/echo a=b c,d 50% x@y:z +1')).toMatchObject({
      stdout: 'a=b c,d 50% x@y:z +1\n',
      exit_code: 0,
    });
    // A script without a #! line still runs as a shell script, as /bin/sh would run it.
    const dir = mkdtempSync(join(tmpdir(), 'exec-plain-'));
    writeFileSync(join(dir, 'noshebang'), 'echo "from $0"\n', { mode: 0o755 });
    expect(await run(`${dir}/noshebang`)).toMatchObject({ stdout: `from ${dir}/noshebang\n`, exit_code: 0 });
    expect(await run('/nonexistent/program --flag')).toMatchObject({ exit_code: 127, success: false });
    // Anything the shell would expand still goes through it.
    expect((await run('/bin/echo $0')).stdout).not.toBe('$0\n');
    expect((await run('/bin/echo ~')).stdout).not.toBe('~\n');
  });

  it('runs a list as program and arguments with no shell', async () => {
    const r = await run(['printf', '%s|%s', '$HOME; echo injected', 42]);
    expect(r).toMatchObject({ stdout: '$HOME; echo injected|42', exit_code: 0, success: true });
  });

  it('runs in cwd with env merged over the process environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exec-cwd-'));
    const r = await run('pwd; echo "$RUNNER_EXEC_TEST ${HOME-unset}"; test -n "$PATH" && echo path-kept', {
      cwd: dir,
      env: { RUNNER_EXEC_TEST: 7, HOME: false },
    });
    expect(r.stdout).toBe(`${realpathSync(dir)}\n7 unset\npath-kept\n`);
  });

  it("keeps the runner's own RUNNER_* variables (credentials) from the child, unless env passes one", async () => {
    process.env.RUNNER_JOIN_TOKEN = 'join-secret-123';
    try {
      const inherited = await run('echo "${RUNNER_JOIN_TOKEN-absent} ${PATH:+path}"');
      expect(inherited.stdout).toBe('absent path\n');
      const merged = await run('echo "${RUNNER_JOIN_TOKEN-absent}"', { env: { OTHER: 1 } });
      expect(merged.stdout).toBe('absent\n');
      const passed = await run('echo "$RUNNER_JOIN_TOKEN"', { env: { RUNNER_JOIN_TOKEN: 'given' } });
      expect(passed.stdout).toBe('given\n');
    } finally {
      delete process.env.RUNNER_JOIN_TOKEN;
    }
  });

  it('feeds stdin, and gives the program /dev/null when there is none', async () => {
    expect((await run(['tr', 'a-z', 'A-Z'], { stdin: 'hello\nworld' })).stdout).toBe('HELLO\nWORLD');
    expect((await run('cat; echo end')).stdout).toBe('end\n');
  });

  it('kills the whole process group when the timeout passes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exec-timeout-'));
    const pidFile = join(dir, 'pid');
    const started = Date.now();
    const r = await run(`sleep 30 & echo $! > ${pidFile}; echo started; wait`, { timeout: '300ms' });
    // Far below the 30 s the sleep would take if only the shell were killed.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r).toMatchObject({
      timed_out: true,
      success: false,
      exit_code: null,
      signal: 'SIGTERM',
      stdout: 'started\n',
    });
    // The sleep closes its end of the pipes as it exits, a moment before it shows as a zombie:
    // wait for that moment (a busy machine can stretch it), with a ceiling far above it.
    await expect.poll(() => dead(Number(readFileSync(pidFile, 'utf8'))), { timeout: 10_000 }).toBe(true);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const r = await run(`trap '' TERM; sleep 30; echo survived`, { timeout: 0.2 });
    expect(r).toMatchObject({ timed_out: true, success: false, exit_code: null, signal: 'SIGKILL' });
    expect(r.stdout).toBe('');
    expect(r.duration).toBeGreaterThanOrEqual((200 + KILL_GRACE_MS) / 1000 - 0.05);
  });

  it('reports a process killed by a signal with exit_code nil and the signal', async () => {
    expect(await run('kill -9 $$')).toMatchObject({ exit_code: null, signal: 'SIGKILL', success: false });
  });

  it('kills the command and raises when the task is cancelled', async () => {
    const controller = new AbortController();
    // Cancel once the command has demonstrably started: its first line reached the log.
    const { call } = luaCallContext({ signal: controller.signal }, (line) => {
      if (line.message === 'ready') controller.abort();
    });
    const started = Date.now();
    await expect(exec.run(call, 'echo ready; sleep 30')).rejects.toThrow('exec.run: cancelled: echo ready; sleep 30');
    expect(Date.now() - started).toBeLessThan(20_000);
    await expect(async () => exec.run(call, 'true')).rejects.toThrow('cancelled before starting');
  });

  it('bounds each stream at the cap and says it truncated', async () => {
    const r = await run(`head -c ${OUTPUT_CAP_BYTES + 100_000} /dev/zero; echo small >&2`);
    expect(r.stdout.length).toBe(OUTPUT_CAP_BYTES);
    expect(r).toMatchObject({ truncated: true, stderr: 'small\n', success: true });
  });

  it('reports a missing program like a shell does (127) instead of raising', async () => {
    const r = await run(['/nonexistent/program', 'x']);
    expect(r).toMatchObject({ exit_code: 127, success: false, stdout: '' });
    expect(r.stderr).toContain('program not found: /nonexistent/program');
    expect((await run('/nonexistent/program')).exit_code).toBe(127);
  });

  it('raises on a cwd that does not exist, naming it', async () => {
    await expect(run('true', { cwd: '/nonexistent/dir' })).rejects.toThrow(
      'exec.run: cwd "/nonexistent/dir" does not exist or is not a directory',
    );
  });

  it('names the bad argument', async () => {
    await expect(run(12)).rejects.toThrow('exec.run: argument 1 must be a string or a list of strings, got number');
    await expect(run(undefined)).rejects.toThrow('argument 1 must be a string or a list of strings, got nil');
    await expect(run(['ls', { a: 1 }])).rejects.toThrow('exec.run: argument 1[2] must be a string, got table');
    await expect(run([])).rejects.toThrow('argument 1 must not be an empty list');
    await expect(run('  ')).rejects.toThrow('argument 1 must not be an empty command');
    await expect(run('true', 'fast')).rejects.toThrow('argument 2 must be a table of options, got string');
    await expect(run('true', { timeot: 1 })).rejects.toThrow(
      'exec.run: unknown option "timeot" (known: cwd, env, timeout, stdin)',
    );
    await expect(run('true', { timeout: 'soon' })).rejects.toThrow('exec.run: option timeout: invalid duration "soon"');
    await expect(run('true', { env: { A: { b: 1 } } })).rejects.toThrow(
      'exec.run: option env.A must be a string, number or false, got table',
    );
    await expect(run('true', { stdin: 5 })).rejects.toThrow('option stdin must be a string, got number');
  });

  it('accepts an empty options table whichever way the runtime converts it', async () => {
    expect((await run('true', [])).success).toBe(true);
    expect((await run('true', {})).success).toBe(true);
  });

  it('runs nothing in dry-run and says what it would have run', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'exec-dry-')), 'touched');
    const r = await exec.run(luaCallContext({ dryRun: true }).call, ['touch', marker]);
    expect(r).toEqual({
      stdout: '',
      stderr: '',
      exit_code: 0,
      success: true,
      skipped: true,
      note: `dry-run: would run: touch ${marker}`,
    });
    expect(existsSync(marker)).toBe(false);
    // Bad arguments are still bad in dry-run: the real run would fail on them.
    await expect(async () => exec.run(luaCallContext({ dryRun: true }).call, 3)).rejects.toThrow('got number');
  });

  it('streams each output line to the task log at debug level', async () => {
    const { call, lines } = luaCallContext();
    await exec.run(call, 'printf "one\\ntwo\\r\\nthree"; echo warn >&2');
    const output = lines.filter((l) => l.fields.stream).map((l) => [l.level, l.fields.stream, l.message]);
    expect(output).toEqual(
      expect.arrayContaining([
        ['debug', 'stdout', 'one'],
        ['debug', 'stdout', 'two'],
        ['debug', 'stdout', 'three'],
        ['debug', 'stderr', 'warn'],
      ]),
    );
    expect(output).toHaveLength(4);
  });
});
