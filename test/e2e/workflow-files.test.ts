// The `file` field of POST /workflows/run as an attacker and a user meet it: a real `runner
// server` on loopback, real files, a real FIFO, the runner CLI as a separate process.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchAs, runRunner, spawnRunner, stopAll, tempDataDir, waitForOutput } from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
let dataDir: string;
let base: string;
let call: ReturnType<typeof fetchAs>;

const WORKFLOW = `version: "1.0"
tasks:
  - name: hello
    exec:
      script: return true, "hello from the workflow dir"
`;

// /etc/shadow as this machine has it (the tests run as root), or a stand-in of the same shape.
const shadowPath = '/etc/shadow';
const shadowLines = readFileSync(shadowPath, 'utf8')
  .split('\n')
  .filter((line) => line.length > 3);

beforeAll(async () => {
  dataDir = tempDataDir('runner-wf-files-');
  const child = spawnRunner(['server', '--http-port', '0', '--port', '0'], { env: { RUNNER_DATA_DIR: dataDir } });
  children.push(child);
  const [, address] = await waitForOutput(child, /REST API listening on (127\.0\.0\.1:\d+)/);
  base = `http://${address}/api/v1`;
  call = fetchAs(dataDir);
  const dir = join(dataDir, 'workflows');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hello.yaml'), WORKFLOW);
  symlinkSync(shadowPath, join(dir, 'shadow.yaml'));
  execFileSync('mkfifo', [join(dir, 'fifo.yaml')]);
}, 30_000);

afterAll(() => {
  stopAll(children, 'SIGTERM');
});

async function run(file: string) {
  const response = await call(`${base}/workflows/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ file }),
  });
  return { status: response.status, text: await response.text() };
}

function expectNoShadow(text: string, where: string) {
  for (const line of shadowLines) expect(text.includes(line), `${where} quotes ${shadowPath}`).toBe(false);
  // The parse error of a shadow file would quote its first user's line: root's entry.
  expect(text, where).not.toMatch(/root:[^\s"]*:\d+:/);
}

async function waitForRun(id: string) {
  for (let i = 0; i < 100; i++) {
    const record = (await (await call(`${base}/executions/${id}`)).json()) as { status: string; tasks: unknown[] };
    if (record.status !== 'running') return record;
    await sleep(100);
  }
  throw new Error(`run ${id} did not end`);
}

describe('POST /workflows/run with file', () => {
  it('refuses /etc/shadow, a link to it and /dev/zero with 403 naming engine.workflow_dirs', async () => {
    for (const file of [shadowPath, join(dataDir, 'workflows', 'shadow.yaml'), '/dev/zero', 'shadow.yaml']) {
      const answer = await run(file);
      expect(answer.status, file).toBe(403);
      expect(answer.text).toContain('engine.workflow_dirs');
      expectNoShadow(answer.text, `the answer for ${file}`);
    }
  });

  it('refuses a FIFO in the directory before reading it (the request does not hang)', async () => {
    const answer = await run('fifo.yaml');
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('not a regular file');
  });

  it('runs a file in the workflow directory', async () => {
    const answer = await run('hello.yaml');
    expect(answer.status).toBe(202);
    const { id } = JSON.parse(answer.text) as { id: string };
    expect(await waitForRun(id)).toMatchObject({ status: 'succeeded', workflow_name: 'hello' });
  });

  it('`runner run --file` of a file outside the directory sends its content to the master', async () => {
    const elsewhere = join(tmpdir(), `runner-own-${process.pid}.yaml`);
    writeFileSync(elsewhere, WORKFLOW);
    const result = await runRunner(['run', 'own', '--file', elsewhere, '--output', 'json', '--verbose'], {
      env: { RUNNER_DATA_DIR: dataDir },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('hello from the workflow dir');
    // It ran on the master (the CLI did not fall back to running it itself).
    const list = (await (await call(`${base}/executions?limit=100`)).json()) as {
      executions: { workflow_name: string; trigger: string }[];
    };
    expect(list.executions).toContainEqual(expect.objectContaining({ workflow_name: 'own', trigger: 'cli' }));
  });

  it('quotes nothing of /etc/shadow in the log or the run records', async () => {
    const executions = await (await call(`${base}/executions?limit=100`)).text();
    expectNoShadow(executions, 'GET /executions');
    expectNoShadow(readFileSync(join(dataDir, 'logs', 'runner.log'), 'utf8'), 'runner.log');
  });
});
