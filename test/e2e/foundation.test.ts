// The foundation as a user meets it: the real `runner` command in real processes, a real master
// on an ephemeral port, real files. Shells for completion are Debian's bash, zsh and fish.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { hasTool } from '../support/tools.js';
import {
  fetchAs,
  finished,
  localAuth,
  repoRoot,
  runRunner,
  spawnRunner,
  stopAll,
  tempDataDir,
  waitForOutput,
} from './helpers.js';

const greeterDir = join(repoRoot, 'test/fixtures/external-plugins');
const children: ReturnType<typeof spawnRunner>[] = [];

afterEach(() => {
  stopAll(children);
});

async function startMaster(dataDir: string) {
  const child = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1'], {
    env: { RUNNER_DATA_DIR: dataDir },
  });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  return { child, base: `http://${address}/api/v1`, fetch: fetchAs(dataDir) };
}

const workflow = (dir: string, body: string) => {
  const file = join(dir, 'wf.yaml');
  writeFileSync(file, `version: "1.0"\ntasks:\n${body}`);
  return file;
};

describe('runner from a new machine', () => {
  it('works as `npx runner` from the repository root', () => {
    const result = spawnSync('npx', ['--no-install', 'runner', '--help'], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, RUNNER_DATA_DIR: tempDataDir() },
    });
    expect(result.status).toBe(0);
    for (const command of ['server', 'run', 'db', 'modules', 'doctor', 'completion'])
      expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });
});

describe('completion scripts', () => {
  const script = (shell: string) =>
    execFileSync(process.execPath, [join(repoRoot, 'kernel/bin/runner.js'), 'completion', shell], { encoding: 'utf8' });

  it('bash completes commands, subcommands and options from the command tree', () => {
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `${script('bash')}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _runner; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        {
          encoding: 'utf8',
        },
      )
        .split('\n')
        .filter(Boolean);
    expect(complete('runner', 'mod')).toEqual(['modules']);
    expect(complete('runner', 'db', '')).toEqual(expect.arrayContaining(['backup', 'restore', 'vacuum', 'stats']));
    expect(complete('runner', 'db', 'backup', '--c')).toEqual(expect.arrayContaining(['--compress', '--config']));
    expect(complete('runner', 'completion', '')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
  });

  it.skipIf(!hasTool('fish', 'fish'))('fish completes from its script', () => {
    const out = execFileSync('fish', ['-c', `${script('fish')}\ncomplete -C 'runner db b'; complete -C 'runner mo'`], {
      encoding: 'utf8',
    });
    expect(out).toMatch(/^backup\t/m);
    expect(out).toMatch(/^modules\t/m);
  });

  it.skipIf(!hasTool('zsh', 'zsh'))('zsh accepts its script', () => {
    const file = join(tempDataDir(), '_runner.zsh');
    writeFileSync(file, script('zsh'));
    expect(spawnSync('zsh', ['-n', file]).status).toBe(0);
  });
});

describe('the master process', () => {
  it('serves health, owns the data directory, shuts down gracefully on SIGTERM', async () => {
    const dataDir = tempDataDir();
    const { child, base, fetch } = await startMaster(dataDir);
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      profile: 'master',
      plugins: expect.arrayContaining(['store', 'http', 'engine']),
    });
    expect(JSON.parse(readFileSync(join(dataDir, 'master.json'), 'utf8'))).toMatchObject({ pid: child.pid });

    const second = await runRunner(['server', '--http-port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`data directory ${dataDir} is in use by runner process ${child.pid}`);

    // Management commands talk to the master while it holds the directory.
    const stats = await runRunner(['db', 'stats', '--output', 'json'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ path: join(dataDir, 'store') });
    // Everything that grows is under a retention policy the master runs (engine and auth plugins).
    expect((JSON.parse(stats.stdout) as { retention: { name: string }[] }).retention.map((p) => p.name)).toEqual(
      expect.arrayContaining(['executions', 'task logs', 'audit records', 'revoked sessions']),
    );
    const backup = await runRunner(['db', 'backup', '--output', join(dataDir, 'through-master.db')], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(backup.code).toBe(0);
    expect(readFileSync(join(dataDir, 'through-master.db')).subarray(0, 15).toString()).toBe('SQLite format 3');
    const zipped = await runRunner(['db', 'backup', '--compress', '--output', join(dataDir, 'through-master.db.gz')], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(zipped.code).toBe(0);
    expect(
      gunzipSync(readFileSync(join(dataDir, 'through-master.db.gz')))
        .subarray(0, 15)
        .toString(),
    ).toBe('SQLite format 3');
    // The API answers a backup as bytes; it writes no file at a path a client names.
    expect((await fetch(`${base}/db/backup`, { method: 'POST', body: '{}' })).status).toBe(405);
    expect((await fetch(`${base}/db/backup?compress=maybe`)).status).toBe(400);
    const restore = await runRunner(['db', 'restore', join(dataDir, 'through-master.db')], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain(`while runner process ${child.pid} uses it`);

    child.kill('SIGTERM');
    const end = await finished(child);
    expect(end.code).toBe(0);
    expect(existsSync(join(dataDir, 'master.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'runner.lock'))).toBe(false);
    const log = readFileSync(join(dataDir, 'logs/runner.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(log.find((l) => l.message === 'received SIGTERM, stopping')).toMatchObject({
      level: 'info',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('answers errors in one JSON shape over a real socket', async () => {
    const dataDir = tempDataDir();
    const { base, fetch } = await startMaster(dataDir);
    const missing = await fetch(`${base}/no/such/route`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found', message: expect.any(String) } });
    const malformed = await fetch(`${base}/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"file": ',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: 'invalid_input' } });
    const wrongType = await fetch(`${base}/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"file": 42}',
    });
    expect(wrongType.status).toBe(400);
    expect(await wrongType.json()).toMatchObject({
      error: { code: 'invalid_input', field: 'file', message: 'file: expected string' },
    });
    const notJson = await fetch(`${base}/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(notJson.status).toBe(415);
    // Headers only, declaring 2 MiB: the master refuses by the declared length before reading a
    // byte. (With the 2 MiB actually sent, the answer and its Connection: close could meet the
    // client still writing, which then failed with EPIPE instead of reading the 413: a CI run.)
    const tooLarge = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${base}/workflows/run`,
        {
          method: 'POST',
          headers: {
            ...localAuth(dataDir),
            'content-type': 'application/json',
            'content-length': String(2 * 1024 * 1024),
          },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode, body });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ error: { code: 'payload_too_large' } });
  });
});

describe('db commands without a master', () => {
  it('backs up and restores, plain and compressed, and vacuums', async () => {
    const dataDir = tempDataDir();
    const env = { RUNNER_DATA_DIR: dataDir };
    const file = workflow(dataDir, '  - name: one\n    exec:\n      script: return true\n');
    expect((await runRunner(['run', 'first', '--file', file], { env })).code).toBe(0);
    for (const compress of [false, true]) {
      const output = join(dataDir, compress ? 'backup.db.gz' : 'backup.db');
      const backup = await runRunner(['db', 'backup', '--output', output, ...(compress ? ['--compress'] : [])], {
        env,
      });
      expect(backup.code).toBe(0);
      expect((await runRunner(['run', 'second', '--file', file], { env })).code).toBe(0);
      const restore = await runRunner(['db', 'restore', output, ...(compress ? ['--decompress'] : [])], { env });
      expect(restore.code).toBe(0);
      const stats = JSON.parse((await runRunner(['db', 'stats', '--output', 'json'], { env })).stdout) as {
        tables: { name: string; rows: number }[];
      };
      expect(stats.tables.find((t) => t.name === 'runs')?.rows).toBe(1);
    }
    const gzNoFlag = await runRunner(['db', 'restore', join(dataDir, 'backup.db.gz')], { env });
    expect(gzNoFlag.code).not.toBe(0);
    expect(gzNoFlag.stderr).toContain('--decompress');
    expect((await runRunner(['db', 'vacuum'], { env })).code).toBe(0);
  });
});

describe('an external plugin', () => {
  it('is loaded from --plugins-dir and its Lua module is usable from a workflow', async () => {
    const dataDir = tempDataDir();
    // A copy outside the repository: no node_modules above it holds the SDK, as for a third party.
    const pluginsDir = join(tempDataDir(), 'plugins');
    cpSync(join(greeterDir, 'greeter'), join(pluginsDir, 'greeter'), { recursive: true });
    const file = workflow(
      dataDir,
      '  - name: greet\n    exec:\n      script: |\n        local now = greeter.hello("ops")\n        local later = greeter.later("later", 5)\n        return true, now .. " / " .. later\n',
    );
    const result = await runRunner(['--plugins-dir', pluginsDir, 'run', 'greet', '--file', file, '--output', 'json'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(result.code).toBe(0);
    const task = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.type === 'task' && e.status === 'succeeded');
    expect(task).toMatchObject({ name: 'greet', message: 'hello, ops / hello, later' });
    const info = await runRunner(['--plugins-dir', pluginsDir, 'modules', 'info', 'greeter']);
    expect(info.code).toBe(0);
    expect(info.stdout).toContain('greeter.later(name: string, ms: number) -> string');
  });
});

describe('a plugin whose setup never finishes', () => {
  // The plugin leaks a timer as well as hanging: the command must still end, with its error.
  const hangingPlugin = (dir: string, holdsTimer: boolean) => {
    const pkg = join(dir, 'hang');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'hang', type: 'module', runner: { plugin: true } }),
    );
    writeFileSync(
      join(pkg, 'index.js'),
      `import { definePlugin } from '@runner/plugin-sdk';
export const plugin = definePlugin({
  id: 'hang', version: '1.0.0', description: 'never finishes its setup', setupTimeoutMs: 300,
  setup: () => new Promise(() => { ${holdsTimer ? 'setInterval(() => {}, 1000);' : ''} }),
});\n`,
    );
    return dir;
  };

  it.each([false, true])(
    'fails the command naming the plugin, and frees the data directory (leaked timer: %s)',
    async (holdsTimer) => {
      const dataDir = tempDataDir();
      const pluginsDir = hangingPlugin(join(tempDataDir(), 'plugins'), holdsTimer);
      const file = workflow(dataDir, '  - name: t\n    exec:\n      script: return true\n');
      const env = { RUNNER_DATA_DIR: dataDir };
      const result = await runRunner(['--plugins-dir', pluginsDir, 'run', 'w', '--file', file], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('runner: plugin hang: setup did not finish within 300 ms\n');
      expect((await runRunner(['db', 'stats'], { env })).code).toBe(0);
    },
  );
});

describe('a config value of the wrong type', () => {
  it('is a usage error (exit 2) naming the key and where it came from, whichever plugin reads it', async () => {
    const result = await runRunner(['server', '--bind-address', '127.0.0.1'], {
      env: { RUNNER_DATA_DIR: tempDataDir(), RUNNER_HTTP_PORT: 'eighty' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'runner: config http.port (from env RUNNER_HTTP_PORT): expected an integer from 0 to 65535, got "eighty"\n',
    );
  });

  it('is checked before any plugin is set up, for every command, not only those that boot the plugin', async () => {
    const dataDir = tempDataDir();
    writeFileSync(join(dataDir, 'config.yaml'), 'grpc:\n  prot: 1\n');
    const result = await runRunner(['modules', 'list'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `runner: unknown config key grpc.prot (from ${join(dataDir, 'config.yaml')}); did you mean grpc.port?\n`,
    );
  });
});

describe('secrets in logs', () => {
  it('never writes a secret-named field to the log file or the run record', async () => {
    const dataDir = tempDataDir();
    const file = workflow(
      dataDir,
      '  - name: leak\n    exec:\n      script: |\n        log.info("connecting", { user = "ops", password = "hunter2", nested = { api_key = "k-123" } })\n        return true\n',
    );
    const result = await runRunner(['run', 'leak', '--file', file, '--output', 'json', '--verbose'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('connecting');
    const logFile = readFileSync(join(dataDir, 'logs/runner.log'), 'utf8');
    expect(logFile).toContain('connecting');
    for (const text of [result.stdout, logFile]) {
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('k-123');
      expect(text).toContain('***');
    }
  });
});
