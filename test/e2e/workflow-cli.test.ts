import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  fetchAs,
  finished,
  localAuth,
  runRunner,
  runnerBin,
  spawnRunner,
  tempDataDir,
  waitForOutput,
} from './helpers.js';

/**
 * `runner run` as a user runs it: the built CLI in a real process, embedded (no master), with its
 * output modes, exit codes and errors; once through a pseudo-terminal (the live view) and once
 * against a running master that holds the data directory.
 */

const dir = mkdtempSync(join(tmpdir(), 'runner-wf-cli-'));
const dataDir = tempDataDir();
const env = { RUNNER_DATA_DIR: dataDir };

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const run = (args: string[], extraEnv: Record<string, string> = {}) =>
  runRunner(['run', ...args], { env: { ...env, ...extraEnv }, cwd: dir });

write(
  'ok.yaml',
  `version: "1.0"
vars:
  app: web
tasks:
  - name: build
    exec:
      script: |
        log.info("building {{ vars.app }}")
        log.debug("details")
        return true, "built", { artifact = "{{ vars.app }}-1.0.tgz" }
  - name: ship
    depends_on: [build]
    exec:
      script: return true, "shipped " .. tasks.build.outputs.artifact
`,
);

const failing = write(
  'failing.yaml',
  `version: "1.0"
tasks:
  - name: pre
    exec:
      script: return true
  - name: broken
    exec:
      script: error("it broke")
  - name: after
    depends_on: [broken]
    exec:
      script: return true
`,
);

const seconds = String.raw`\d+\.\d\ds`;
const runId = String.raw`r-[0-9a-z]{9}-[0-9a-f]{8}`;

describe('runner run (text output, not a terminal)', () => {
  it('prints a line per finished task and a summary, and exits 0', async () => {
    const { code, stdout, stderr } = await run(['demo', '--file', 'ok.yaml']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`^✔ build  ${seconds}  built$`));
    expect(lines[1]).toMatch(new RegExp(`^✔ ship  ${seconds}  shipped web-1.0.tgz$`));
    expect(lines[2]).toMatch(new RegExp(`^✔ demo succeeded in ${seconds}: 2 succeeded  \\[run ${runId}\\]$`));
    expect(lines[3]).toBe('');
  });

  it('exits 1 when a task failed, saying why and what was skipped', async () => {
    const { code, stdout } = await run(['demo', '--file', 'failing.yaml']);
    expect(code).toBe(1);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^✔ pre  ${seconds}$`));
    expect(lines[1]).toMatch(new RegExp(`^✖ broken  ${seconds}  broken:1: it broke \\(failing\\.yaml:8\\)$`));
    expect(lines[2]).toBe('↷ after  not run: it depends on broken, which failed');
    expect(lines[3]).toMatch(
      new RegExp(`^✖ demo failed in ${seconds}: 1 succeeded, 1 failed, 1 skipped  \\[run ${runId}\\]$`),
    );
    expect(lines[4]).toBe('  task broken failed');
    expect(lines).toHaveLength(5);
  });

  it('exits 0 when the only failures were ignored', async () => {
    write(
      'ignored.yaml',
      `version: "1.0"
tasks:
  - name: flaky
    ignore_errors: true
    exec:
      script: return false, "not today"
`,
    );
    const { code, stdout } = await run(['demo', '--file', 'ignored.yaml']);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`^! flaky  ${seconds}  not today\n✔ demo succeeded in ${seconds}: 1 ignored  \\[run ${runId}\\]\n$`),
    );
  });

  it('shows every log line with --verbose, and none without', async () => {
    const verbose = await run(['demo', '--file', 'ok.yaml', '--verbose']);
    expect(verbose.code).toBe(0);
    expect(verbose.stdout.split('\n').slice(0, 3)).toEqual([
      '  build | building web',
      '  build | debug: details',
      expect.stringMatching(/^✔ build /),
    ]);
    const quiet = await run(['demo', '--file', 'ok.yaml']);
    expect(quiet.stdout).not.toContain(' | ');
  });

  it('prints warnings of the file on stderr and runs anyway', async () => {
    write(
      'warn.yaml',
      `version: "1.0"
tasks:
  - name: lint
    exec:
      script: return true, "ok"
  - name: ship
    exec:
      script: return true, "lint {{ tasks.lint.status }}"
`,
    );
    const { code, stdout, stderr } = await run(['demo', '--file', 'warn.yaml']);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`✔ ship  ${seconds}  lint succeeded\n`));
    expect(stderr).toMatch(
      /^\d\d:\d\d:\d\d WARN {2}warn\.yaml:8:37: tasks\[1\]\.exec\.script: task "ship" reads "tasks\.lint" but does not depend on it; add "lint" to depends_on so that it runs first {2}plugin=engine\n$/,
    );
  });

  it('does not end the runner when a script calls os.exit', async () => {
    write(
      'exit.yaml',
      `version: "1.0"
tasks:
  - name: leave
    exec:
      script: os.exit(0)
`,
    );
    const { code, stdout } = await run(['demo', '--file', 'exit.yaml']);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      new RegExp(
        `^✖ leave  ${seconds}  leave:1: os.exit cannot end the runner \\(return false to fail a task, error\\(\\) to stop a script\\) \\(exit\\.yaml:5\\)\n✖ demo failed in `,
      ),
    );
  });
});

describe('runner run --output json', () => {
  it('prints one JSON object a line: the run, each task as it starts and ends, the run again, a summary', async () => {
    const { code, stdout, stderr } = await run(['demo', '--file', 'failing.yaml', '--output', 'json']);
    expect({ code, stderr: stderr.replace(/^.*ERROR failed: .*\n/m, '') }).toEqual({ code: 1, stderr: '' });
    const lines = stdout.trimEnd().split('\n');
    const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const id = objects[0].id as string;
    expect(id).toMatch(new RegExp(`^${runId}$`));
    expect(objects.map((o) => [o.type, o.name ?? o.workflow_name, o.status])).toEqual([
      ['run', 'demo', 'running'],
      ['task', 'pre', 'running'],
      ['task', 'pre', 'succeeded'],
      ['task', 'broken', 'running'],
      ['task', 'broken', 'failed'],
      ['task', 'after', 'skipped'],
      ['run', 'demo', 'failed'],
      ['summary', 'demo', 'failed'],
    ]);
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(objects[2]).toEqual({
      type: 'task',
      run_id: id,
      name: 'pre',
      task: 'pre',
      agent: 'localhost',
      status: 'succeeded',
      attempts: 1,
      started_at: time,
      completed_at: time,
      duration: expect.any(Number),
      log_truncated: false,
    });
    expect(objects[0]).toEqual({
      type: 'run',
      id,
      workflow_name: 'demo',
      status: 'running',
      dry_run: false,
      started_at: time,
      duration: 0,
      trigger: 'cli',
      // An embedded run is started by the operating-system user running the command.
      user: userInfo().username,
      counts: {},
    });
    expect(objects[4]).toMatchObject({
      type: 'task',
      run_id: id,
      task: 'broken',
      agent: 'localhost',
      attempts: 1,
      message: 'broken:1: it broke (failing.yaml:8)',
    });
    expect(objects[5]).toMatchObject({ message: 'not run: it depends on broken, which failed', attempts: 0 });
    expect(objects.at(-1)).toEqual({
      type: 'summary',
      id,
      workflow_name: 'demo',
      status: 'failed',
      dry_run: false,
      duration: expect.any(Number),
      counts: { succeeded: 1, failed: 1, skipped: 1 },
      error: 'task broken failed',
    });
  });

  it('adds the log lines as objects with --verbose', async () => {
    const { code, stdout } = await run(['demo', '--file', 'ok.yaml', '--output', 'json', '--verbose']);
    expect(code).toBe(0);
    const logs = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((o) => o.type === 'log');
    expect(logs).toEqual([
      {
        type: 'log',
        run_id: expect.any(String),
        task: 'build',
        timestamp: expect.any(String),
        level: 'info',
        message: 'building web',
      },
      {
        type: 'log',
        run_id: expect.any(String),
        task: 'build',
        timestamp: expect.any(String),
        level: 'debug',
        message: 'details',
      },
    ]);
  });
});

describe('runner run interrupted', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`cancels the run on ${signal}: the command it waits for is killed, the run recorded cancelled, exit ${code}`, async () => {
      const pidFile = join(dir, `long-${signal}.pid`);
      const file = write(
        `long-${signal}.yaml`,
        `version: "1.0"
vars:
  pid_file: ${pidFile}
tasks:
  - name: long
    exec:
      script: exec.run("echo $$ > " .. vars.pid_file .. "; exec sleep 30")
  - name: next
    exec:
      script: return true
`,
      );
      const child = spawnRunner(['run', 'demo', '--file', file, '--output', 'json', '--verbose'], { env, cwd: dir });
      // exec.run logs the command with its pid once the runner knows it (so it can kill it).
      const [, started] = await waitForOutput(child, /^(\{"type":"log".*"message":"exec\.run: .*)$/m);
      const pid = (JSON.parse(started) as { fields: { pid: number } }).fields.pid;
      await vi.waitFor(() => expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(pid)), {
        timeout: 5000,
        interval: 20,
      });
      child.kill(signal);
      const result = await finished(child);
      expect(result.code).toBe(code);
      const objects = result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(
        objects.filter((o) => o.type === 'task' && o.status !== 'running').map((o) => [o.name, o.status, o.message]),
      ).toEqual([
        ['long', 'cancelled', `cancelled: interrupted (${signal})`],
        ['next', 'skipped', 'not run: the run was cancelled'],
      ]);
      expect(objects.at(-1)).toMatchObject({
        type: 'summary',
        status: 'cancelled',
        error: `cancelled: interrupted (${signal})`,
      });
      expect(objects.filter((o) => o.type === 'run').at(-1)).toMatchObject({ cancelled_by: userInfo().username });
      await vi.waitFor(() => expect(() => process.kill(pid, 0)).toThrow(), { timeout: 5000, interval: 50 });
    });
  }
});

describe('runner run: options', () => {
  const options = write(
    'options.yaml',
    `version: "1.0"
vars:
  app: web
values:
  localhost: { port: 8080, db: { host: db-1, port: 5432 } }
groups:
  deploy: [ship]
  checks: [lint]
tasks:
  - name: fetch
    exec:
      script: return true
  - name: build
    depends_on: [fetch]
    exec:
      script: return true
  - name: lint
    exec:
      script: return true
  - name: ship
    depends_on: [build]
    exec:
      script: return true, vars.app .. " " .. values.port .. " " .. values.db.host .. ":" .. values.db.port
`,
  );
  write('values.yaml', 'localhost:\n  port: 9090\n  db: { port: 6432 }\n');

  it('takes --var and --values (deep-merged over the file)', async () => {
    const { code, stdout } = await run(['demo', '--file', options, '--var', 'app=api', '--values', 'values.yaml']);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`✔ ship  ${seconds}  api 9090 db-1:6432\n`));
  });

  it('runs only a group and what it depends on with --group', async () => {
    const { code, stdout } = await run(['demo', '--file', options, '--group', 'deploy']);
    expect(code).toBe(0);
    expect(stdout.split('\n').map((l) => l.split('  ')[0])).toEqual([
      '✔ fetch',
      '✔ build',
      '✔ ship',
      expect.stringMatching(/^✔ demo succeeded in .*: 3 succeeded$/),
      '',
    ]);
  });

  const usage: [string, string[], string][] = [
    [
      'an unknown group',
      ['--group', 'deplyo'],
      'runner: unknown group "deplyo" (did you mean "deploy"?); known groups: deploy, checks\n',
    ],
    [
      'an undeclared --var',
      ['--var', 'ap=api'],
      'runner: --var "ap=api": the workflow has no variable "ap" (did you mean "app"?); declared: app\n',
    ],
    ['a --var without =', ['--var', 'app'], 'runner: --var "app": expected key=value\n'],
    ['a missing --values file', ['--values', 'nope.yaml'], 'runner: --values nope.yaml: no such file\n'],
  ];
  for (const [what, args, message] of usage) {
    it(`exits 2 for ${what}, running nothing`, async () => {
      expect(await run(['demo', '--file', options, ...args])).toEqual({
        code: 2,
        signal: null,
        stdout: '',
        stderr: message,
      });
    });
  }

  it('reports side effects without doing them with --dry-run', async () => {
    const target = join(dir, 'dry-target.txt');
    write(
      'dry.yaml',
      `version: "1.0"
vars:
  target: ${target}
tasks:
  - name: skipped-by-default
    exec:
      script: error("must not run")
  - name: writes
    dry_run: run
    exec:
      script: |
        local r = file.write(vars.target, "hello")
        return true, r.note
`,
    );
    const { code, stdout } = await run(['demo', '--file', 'dry.yaml', '--dry-run']);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe(
      '↷ skipped-by-default  dry-run: script not run (set dry_run: run to run it with side effects reported only)',
    );
    expect(stdout.split('\n')[1]).toMatch(
      new RegExp(`^✔ writes  ${seconds}  dry-run: would write ${target} \\(5 bytes\\)$`),
    );
    expect(stdout).toMatch(/: 1 skipped, 1 succeeded \(dry run\) {2}\[run /);
    expect(existsSync(target)).toBe(false);
  });
});

describe('runner run: input it refuses (exit 2, nothing runs)', () => {
  const cases: [string, string, (file: string) => string][] = [
    [
      'cycle.yaml',
      'version: "1.0"\ntasks:\n  - name: a\n    depends_on: [b]\n    exec:\n      script: return true\n  - name: b\n    depends_on: [a]\n    exec:\n      script: return true\n',
      (f) => `${f}:8:18: circular dependency: a -> b -> a`,
    ],
    [
      'unknown-key.yaml',
      'version: "1.0"\ntasks:\n  - name: a\n    dependson: [b]\n    exec:\n      script: return true\n',
      (f) => `${f}:4:5: tasks[0]: unknown key "dependson" (did you mean "depends_on"?)`,
    ],
    [
      'syntax.yaml',
      'version: "1.0"\ntasks:\n  - name: a\n    exec:\n      script: |\n        local ok = true\n        if ok then\n          ok = @\n        end\n',
      (f) => `${f}:8:16: tasks[0].exec.script: the script of task "a" does not compile: unexpected symbol near '@'`,
    ],
    ['yaml.yaml', 'version: "1.0\ntasks: []\n', (f) => `${f}:3:1: invalid YAML: Missing closing "quote`],
    [
      'template.yaml',
      'version: "1.0"\nvars:\n  app: web\ntasks:\n  - name: a\n    exec:\n      script: return true, "{{ vars.ap }}"\n',
      (f) => `${f}:7:32: tasks[0].exec.script: "vars.ap" is not declared in vars (did you mean "vars.app"?)`,
    ],
    [
      'delegated.yaml',
      'version: "1.0"\ntasks:\n  - name: ship\n    delegate_to: web-1\n    exec:\n      script: return true\n',
      (f) =>
        `${f}:3:5: tasks[0].delegate_to: task "ship" cannot delegate to agent "web-1": no agent transport in this process (delegation needs a master with connected agents)`,
    ],
  ];
  for (const [name, text, message] of cases) {
    it(`refuses ${name} with file:line:column`, async () => {
      write(name, text);
      expect(await run(['demo', '--file', name])).toEqual({
        code: 2,
        signal: null,
        stdout: '',
        stderr: `runner: ${message(name)}\n`,
      });
    });
  }

  it('lists every problem of a file at once, in file order', async () => {
    write(
      'many.yaml',
      'version: "1.0"\ntasks:\n  - name: a\n    timeout: [1]\n    exec:\n      script: return true\n  - name: a\n    exec:\n      script: return x x\n',
    );
    const { code, stderr } = await run(['demo', '--file', 'many.yaml']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      [
        'runner: many.yaml:4:14: tasks[0].timeout: expected a duration such as "30s", found a list',
        'many.yaml:7:11: tasks[1].name: duplicate task name "a" (first defined at line 3)',
        'many.yaml:9:15: tasks[1].exec.script: the script of task "a" does not compile: <eof> expected near \'x\'',
        '',
      ].join('\n'),
    );
  });

  it('names a missing file', async () => {
    expect(await run(['demo', '--file', 'nope.yaml'])).toEqual({
      code: 2,
      signal: null,
      stdout: '',
      stderr: 'runner: workflow file nope.yaml does not exist\n',
    });
  });

  it('says a bare word is neither a file nor a saved flow', async () => {
    expect(await run(['demo'])).toEqual({
      code: 2,
      signal: null,
      stdout: '',
      stderr:
        'runner: no file "demo" and no saved flow of that name (runner flow list); give the workflow file: runner run workflow.yaml\n',
    });
  });

  it('runs a path given as the argument as --file does, named after the file', async () => {
    // What the dashboard's and the executions page's hints tell a new user to type.
    const { code, stdout, stderr } = await run(['ok.yaml', '--output', 'json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const events = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.at(-1)).toMatchObject({ type: 'summary', workflow_name: 'ok', status: 'succeeded' });
    expect((await run(['./nope.yaml'])).stderr).toBe('runner: workflow file ./nope.yaml does not exist\n');
  });

  it('refuses an unknown --output format', async () => {
    const { code, stderr } = await run(['demo', '--file', 'ok.yaml', '--output', 'yaml']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      "runner: option '-o, --output <format>' argument 'yaml' is invalid. Allowed choices are text, json.\n",
    );
  });
});

/**
 * The screen a terminal would show after `output`: handles what the live view writes (text, CR, LF,
 * cursor up, erase below, colours).
 */
function screen(output: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  for (let i = 0; i < output.length; i++) {
    const c = output[i];
    if (c === ESC) {
      // CSI: ESC [ digits letter
      let end = i + 2;
      while (/\d/.test(output[end])) end++;
      const n = Number(output.slice(i + 2, end) || 1);
      const command = output[end];
      if (output[i + 1] !== '[')
        throw new Error(`unexpected escape at ${i}: ${JSON.stringify(output.slice(i, i + 10))}`);
      i = end;
      if (command === 'A') row = Math.max(0, row - n);
      else if (command === 'J') {
        lines.length = row + 1;
        lines[row] = lines[row].slice(0, col);
      } else if (command !== 'm') throw new Error(`unexpected escape ${JSON.stringify(output.slice(i - 3, i + 1))}`);
    } else if (c === '\r') col = 0;
    else if (c === '\n') {
      row++;
      col = 0;
      lines[row] ??= '';
    } else {
      const line = lines[row];
      lines[row] = line.slice(0, col).padEnd(col) + c + line.slice(col + 1);
      col++;
    }
  }
  return lines;
}

const ESC = '\u001b';
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Colour codes (SGR sequences) in terminal output. */
const colours = (output: string) => output.split(`${ESC}[`).filter((part, i) => i > 0 && /^\d+m/.test(part));

/** Runs `runner run` on a pseudo-terminal (util-linux `script`; -e passes the exit code on). */
async function onTerminal(args: string[], extraEnv: Record<string, string | undefined>) {
  const command = [process.execPath, runnerBin, 'run', ...args].map((a) => JSON.stringify(a)).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd: dir,
    env: { ...process.env, ...env, TERM: 'xterm', ...extraEnv },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stdin.end();
  const { code } = await finished(Object.assign(child, { output }));
  return { code, output: output.stdout };
}

describe('runner run on a terminal (live view)', () => {
  const live = write(
    'live.yaml',
    `version: "1.0"
parallel: 2
tasks:
  - name: slow
    loop: [a, b]
    exec:
      script: exec.run("sleep 0.4")
  - name: broken
    depends_on: [slow]
    exec:
      script: return false, "no luck"
`,
  );

  it('redraws running tasks in place, in colour, and leaves the finished lines, the log and the summary', async () => {
    const { code, output } = await onTerminal(['demo', '--file', live], { NO_COLOR: undefined });
    expect(code).toBe(1);
    // A spinner frame (a braille character) in colour was drawn while the loop ran.
    expect(SPINNER.some((frame) => output.includes(`${ESC}[36m${frame}${ESC}[0m slow[a]`))).toBe(true);
    expect(output).toContain(`${ESC}[32m✔${ESC}[0m slow[a]`);
    const shown = screen(output).filter((l) => l !== '');
    expect(shown.slice(0, 2).sort()).toEqual([
      expect.stringMatching(new RegExp(`^✔ slow\\[a\\]  ${seconds}$`)),
      expect.stringMatching(new RegExp(`^✔ slow\\[b\\]  ${seconds}$`)),
    ]);
    // The process log's error line (stderr, the same terminal) landed above the redrawn block
    // instead of being erased by it, and no spinner line was left behind.
    expect(shown.slice(2)).toEqual([
      expect.stringMatching(
        /^\d\d:\d\d:\d\d ERROR failed: no luck {2}plugin=engine workflow=demo run_id=r-\S+ task=broken$/,
      ),
      expect.stringMatching(new RegExp(`^✖ broken  ${seconds}  no luck$`)),
      expect.stringMatching(new RegExp(`^✖ demo failed in ${seconds}: 2 succeeded, 1 failed  \\[run ${runId}\\]$`)),
      '  task broken failed',
    ]);
  });

  it('draws no colours with NO_COLOR, and still redraws in place', async () => {
    const { code, output } = await onTerminal(['demo', '--file', 'ok.yaml', '--verbose'], { NO_COLOR: '1' });
    expect(code).toBe(0);
    expect(colours(output)).toEqual([]);
    expect(output).toContain(`${ESC}[1A${ESC}[J`);
    const shown = screen(output).filter((l) => l !== '');
    expect(shown).toEqual([
      '  build | building web',
      '  build | debug: details',
      expect.stringMatching(new RegExp(`^✔ build  ${seconds}  built$`)),
      expect.stringMatching(new RegExp(`^✔ ship  ${seconds}  shipped web-1.0.tgz$`)),
      expect.stringMatching(/^✔ demo succeeded in /),
    ]);
  });
});

describe('runner run with a master holding the data directory', () => {
  const masterDir = tempDataDir();
  let server: ReturnType<typeof spawnRunner>;
  let api: string;

  beforeAll(async () => {
    server = spawnRunner(['server', '--http-port', '0', '--port', '0', '--bind-address', '127.0.0.1'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    const [, address] = await waitForOutput(server, /REST API listening on \S+ \((http:\/\/\S+\/api\/v1)\)/);
    api = address;
  });
  afterAll(async () => {
    if (server.exitCode === null) {
      server.kill('SIGTERM');
      await finished(server);
    }
  });

  /** A copy in the master's workflow directory (engine.workflow_dirs): the master reads it itself. */
  const inWorkflows = (file: string) => {
    const there = join(masterDir, 'workflows', basename(file));
    mkdirSync(dirname(there), { recursive: true });
    copyFileSync(file, there);
    return there;
  };

  it('runs the workflow on the master, shows it the same way and exits with its outcome', async () => {
    const failingThere = inWorkflows(failing);
    const { code, stdout } = await run(['demo', '--file', failingThere], { RUNNER_DATA_DIR: masterDir });
    expect(code).toBe(1);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^✔ pre  ${seconds}$`));
    expect(lines[1]).toMatch(
      new RegExp(`^✖ broken  ${seconds}  broken:1: it broke \\(${failingThere.replace(/[.]/g, '\\.')}:8\\)$`),
    );
    expect(lines[2]).toBe('↷ after  not run: it depends on broken, which failed');
    const id = new RegExp(`\\[run (${runId})\\]`).exec(lines[3])?.[1];
    const execution = (await (await fetchAs(masterDir)(`${api}/executions/${id}`)).json()) as {
      workflow_name: string;
      status: string;
    };
    expect(execution).toMatchObject({ workflow_name: 'demo', status: 'failed' });
  });

  it('sends the workflow text to the master named by RUNNER_MASTER_URL, from any data directory', async () => {
    const elsewhere = tempDataDir();
    const { code, stdout } = await run(
      [
        'remote-demo',
        '--file',
        write(
          'remote.yaml',
          'version: "1.0"\ntasks:\n  - name: one\n    exec:\n      script: return true, "ran remotely"\n',
        ),
      ],
      {
        RUNNER_DATA_DIR: elsewhere,
        RUNNER_MASTER_URL: api,
        // Another data directory has no local credential: a remote CLI sends a token.
        RUNNER_TOKEN: localAuth(masterDir).authorization.slice('Bearer '.length),
      },
    );
    expect(code).toBe(0);
    const id = new RegExp(`\\[run (${runId})\\]`).exec(stdout)?.[1];
    const execution = (await (await fetchAs(masterDir)(`${api}/executions/${id}`)).json()) as {
      workflow_name: string;
      status: string;
    };
    expect(execution).toMatchObject({ workflow_name: 'remote-demo', status: 'succeeded' });
    // Nothing ran embedded: the other data directory holds no store.
    expect(existsSync(join(elsewhere, 'store'))).toBe(false);
  });

  it('exits 2 with the problems when the master refuses the workflow', async () => {
    const file = inWorkflows(
      write(
        'refused.yaml',
        'version: "1.0"\ntasks:\n  - name: a\n    dependson: [b]\n    exec:\n      script: return true\n',
      ),
    );
    const { code, stdout, stderr } = await run(['demo', '--file', file], { RUNNER_DATA_DIR: masterDir });
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toBe(`runner: ${file}:4:5: tasks[0]: unknown key "dependson" (did you mean "depends_on"?)\n`);
  });
});
