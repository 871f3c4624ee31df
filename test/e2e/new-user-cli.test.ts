// What a new user met in the CLI beside a running master (issue 19, item 6): `runner ui` and
// `runner repl` say where the master serves the web UI and what to do, not a bare "data directory
// in use"; `runner ui --help` says it serves the UI; `runner doctor` reports the master the CLI
// would really use and the addresses a master would bind, not a guess of 0.0.0.0:50053; a workflow
// is run by its path (also through the master, whose validation errors name the file); commands of
// features not built yet say so instead of a far did-you-mean.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, runRunner, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
const dataDir = tempDataDir('runner-new-user-');
let base: string;
let pid: number;

beforeAll(async () => {
  const master = spawnRunner(['server', '--http-port', '0', '--port', '0', '--bind-address', '127.0.0.1'], {
    env: { RUNNER_DATA_DIR: dataDir },
  });
  children.push(master);
  const [, address] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/, 45_000);
  base = `http://${address}`;
  pid = master.pid!;
}, 60_000);

afterAll(async () => {
  // Waited for: a master writes its snapshot as it stops, into the directory removed after the file.
  const exits = children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => finished(c));
  stopAll(children, 'SIGTERM');
  await Promise.all(exits);
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  runRunner(args, { env: { RUNNER_DATA_DIR: dataDir, ...env } });

describe('beside a running master', () => {
  it('runner ui says the master serves the web UI at its address', async () => {
    const ui = await cli(['ui', '--port', '0']);
    expect(ui.code).toBe(1);
    expect(ui.stderr).toBe(
      `runner: a master (pid ${pid}) already runs with data directory ${dataDir}: it serves the web UI at ${base}/ and the REST API at ${base}/api/v1; open that address in a browser\n`,
    );
  });

  it('runner repl says so too, and how to start a REPL of its own', async () => {
    const repl = await cli(['repl'], {});
    expect(repl.code).toBe(1);
    expect(repl.stderr).toContain(`runner: a master (pid ${pid}) already runs with data directory ${dataDir}`);
    expect(repl.stderr).toContain('start a REPL on a data directory of its own: runner --data-dir <dir> repl\n');
    // Which works.
    const own = await runRunner(['--data-dir', tempDataDir('runner-new-user-repl-'), 'repl'], {
      input: 'print(1 + 1)\n',
    });
    expect(own).toMatchObject({ code: 0, stdout: expect.stringContaining('2') as string });
  });

  it('runner doctor reports the master it would use, where it was found', async () => {
    const doctor = await cli(['doctor']);
    expect(doctor.stdout).toMatch(
      new RegExp(`master\\s+pid ${pid} answers at ${base.replace(/\./g, '\\.')} \\(from .*master\\.json`),
    );
    // A master named by RUNNER_MASTER_URL is the one the CLI would use, from any data directory.
    const remote = await runRunner(['doctor'], {
      env: { RUNNER_DATA_DIR: tempDataDir('runner-new-user-remote-'), RUNNER_MASTER_URL: base },
    });
    expect(remote.stdout).toMatch(
      new RegExp(
        `master\\s+answers at ${base.replace(/\./g, '\\.')} \\(from master\\.url \\(from env RUNNER_MASTER_URL\\)\\)`,
      ),
    );
  });
});

describe('runner run through the master', () => {
  it('takes the workflow file as its argument, or --file alone', async () => {
    const dir = tempDataDir('runner-new-user-files-');
    writeFileSync(
      join(dir, 'hello.yaml'),
      'version: "1.0"\ntasks:\n  - name: hi\n    exec:\n      script: return true\n',
    );
    const byPath = await runRunner(['run', 'hello.yaml'], { cwd: dir, env: { RUNNER_DATA_DIR: dataDir } });
    expect(byPath).toMatchObject({ code: 0, stdout: expect.stringContaining('hello succeeded') as string });
    const byFile = await runRunner(['run', '--file', 'hello.yaml'], { cwd: dir, env: { RUNNER_DATA_DIR: dataDir } });
    expect(byFile).toMatchObject({ code: 0, stdout: expect.stringContaining('hello succeeded') as string });
  });

  it("names the file, line and column of a problem, without the master's URL", async () => {
    const dir = tempDataDir('runner-new-user-bad-');
    writeFileSync(
      join(dir, 'bad.yaml'),
      'version: "1.0"\ntasks:\n  - name: a\n    depends_on: [nope]\n    exec:\n      script: return true\n',
    );
    const bad = await runRunner(['run', 'bad.yaml'], { cwd: dir, env: { RUNNER_DATA_DIR: dataDir } });
    expect(bad).toMatchObject({
      code: 2,
      stderr: 'runner: bad.yaml:4:18: tasks[0].depends_on[0]: unknown task "nope"\n',
    });
  });
});

describe('the commands of every feature', () => {
  it('are offered in the help, answer --help, and a typo gets a did-you-mean', async () => {
    const help = await runRunner(['--help']);
    for (const name of ['flow', 'scheduler', 'hook', 'events', 'stack', 'secret', 'ssh', 'terminal', 'gitops'])
      expect(help.stdout).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
    for (const name of ['gitops', 'secret', 'terminal', 'ssh']) {
      const answer = await runRunner([name, '--help'], {
        env: { RUNNER_DATA_DIR: tempDataDir('runner-new-user-help-') },
      });
      expect(answer.code, answer.stderr).toBe(0);
      expect(answer.stdout).toMatch(new RegExp(`^Usage: runner ${name} `));
    }
    const typo = await runRunner(['agnet', 'list']);
    expect(typo.stderr).toBe("runner: unknown command 'agnet'\n(Did you mean agent?)\n");
  });
});
