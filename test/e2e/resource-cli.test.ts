// CLI commands built from route declarations (plugin-sdk resourceCommand), against a real master:
// a resource a third party adds with declarations only (test/fixtures/external-plugins/notes) gets
// its CLI, its OpenAPI entries and its typed UI client; `runner executions list|get|logs|cancel|
// rerun` works; every command has --output table|json|yaml, the same error text and exit codes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callApi,
  repoRoot,
  runRunner,
  runToEnd,
  spawnRunner,
  stopAll,
  tempDataDir,
  waitForOutput,
  type ApiRun,
} from './helpers.js';

const children: ReturnType<typeof spawnRunner>[] = [];
const masterDir = tempDataDir('runner-resource-cli-');
// A copy outside the repository, as a third party's plugin would be.
const pluginsDir = join(tempDataDir('runner-resource-cli-plugins-'), 'plugins');
let base: string;

beforeAll(async () => {
  cpSync(join(repoRoot, 'test/fixtures/external-plugins/notes'), join(pluginsDir, 'notes'), { recursive: true });
  const master = spawnRunner(
    ['--plugins-dir', pluginsDir, 'server', '--http-port', '0', '--port', '0', '--bind-address', '127.0.0.1'],
    { env: { RUNNER_DATA_DIR: masterDir } },
  );
  children.push(master);
  const [, address] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/, 45_000);
  base = `http://${address}/api/v1`;
}, 60_000);

afterAll(() => stopAll(children, 'SIGTERM'));

const cli = (...args: string[]) =>
  runRunner(['--plugins-dir', pluginsDir, ...args], { env: { RUNNER_DATA_DIR: masterDir } });

describe('a resource declared as routes only (notes plugin)', () => {
  it('gets add, get, update, list, custom actions and remove from its declarations', async () => {
    const added = await cli('notes', 'add', 'todo', 'buy milk');
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toBe('name:   todo\ntext:   buy milk\npinned: false\nsize:   8\n');
    // A body field of the declaration is an option typed from its schema (boolean: a flag).
    expect((await cli('notes', 'add', 'idea', 'ship it', '--pinned')).code).toBe(0);
    expect((await cli('notes', 'update', 'todo', '--text', 'buy oat milk')).stdout).toContain('size:   12\n');
    expect((await cli('notes', 'pin', 'todo')).stdout).toContain('pinned: true\n');

    const table = await cli('notes', 'list');
    expect(table.stdout).toMatch(/^NAME\s+TEXT\s+PINNED\s+SIZE\n/);
    expect(table.stdout).toMatch(/todo\s+buy oat milk\s+true\s+12\n/);
    const json = JSON.parse((await cli('notes', 'list', '-o', 'json')).stdout) as { notes: { name: string }[] };
    expect(json.notes.map((n) => n.name)).toEqual(['todo', 'idea']);
    // YAML output reads back as exactly the JSON answer.
    expect(parseYaml((await cli('notes', 'list', '--output', 'yaml')).stdout)).toEqual(json);
    // A query field of the declaration is an option too.
    const pinned = JSON.parse((await cli('notes', 'list', '--pinned', '-o', 'json')).stdout) as typeof json;
    expect(pinned.notes.map((n) => n.name)).toEqual(['todo', 'idea']);

    expect(await cli('notes', 'remove', 'idea')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await cli('notes', 'get', 'idea')).stderr).toBe('runner: note "idea" does not exist\n');
  });

  it('has the same error text and exit codes as every command: 2 for bad input, 1 for a failure', async () => {
    const missing = await cli('notes', 'get', 'nope');
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: 'runner: note "nope" does not exist\n' });
    const conflict = await cli('notes', 'add', 'dup', 'a');
    expect(conflict.code).toBe(0);
    expect(await cli('notes', 'add', 'dup', 'b')).toMatchObject({ code: 1, stderr: 'runner: note "dup" exists\n' });
    const badFormat = await cli('notes', 'list', '-o', 'xml');
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('--output: "xml" is not one of table, json, yaml');
  });

  it('is in the OpenAPI document and the typed client generated from the same declarations', async () => {
    // As the build makes them (scripts/openapi.mjs), in a process of its own as the build runs it.
    const generated = await promisify(execFile)(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(repoRoot, 'scripts/openapi.mjs'))});
         const document = await m.generateDocument({ extraDirs: [${JSON.stringify(pluginsDir)}] });
         process.stdout.write(JSON.stringify({ document, types: await m.generateTypes(document) }));`,
      ],
      { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(generated.stderr).toBe('');
    const { document: built, types } = JSON.parse(generated.stdout) as {
      document: { paths: Record<string, Record<string, unknown>> };
      types: string;
    };
    const served = (await callApi<{ paths: Record<string, unknown> }>({ masterDir, base }, 'GET', '/openapi.json'))
      .body;
    expect(built).toEqual(served);
    expect(Object.keys(built.paths['/api/v1/notes/{name}'])).toEqual(['get', 'patch', 'delete']);
    expect(types).toContain('"/api/v1/notes/{name}/pin"');
    // The body's fields with their types, as the UI's openapi-fetch client is checked against them.
    expect(types).toMatch(/name: string;\s+\/\*\* @description what it says \*\/\s+text: string;/);
  }, 60_000);

  it('lists again with --watch until interrupted', async () => {
    const watch = spawnRunner(['--plugins-dir', pluginsDir, 'notes', 'list', '--watch', '--interval', '0.2'], {
      env: { RUNNER_DATA_DIR: masterDir },
    });
    children.push(watch);
    // Two answers, each a table with its header.
    await waitForOutput(watch, /NAME[^]*NAME/);
    watch.kill('SIGINT');
    const code = await new Promise((done) => watch.once('exit', done));
    expect(code).toBe(0);
  });
});

describe('runner executions', () => {
  let run: ApiRun;

  beforeAll(async () => {
    run = await runToEnd<ApiRun>(
      { masterDir, base },
      {
        content:
          'version: "1.0"\ntasks:\n  - name: greet\n    exec:\n      script: log.info("hello from greet"); return true\n',
        workflow_name: 'greeting',
      },
    );
  }, 60_000);

  it('list: a table with durations for people, and json', async () => {
    const listed = await cli('executions', 'list');
    expect(listed.stderr).toBe('');
    expect(listed.stdout).toMatch(/^ID\s+WORKFLOW\s+STATUS\s+STARTED\s+DURATION\s+TRIGGER\s+USER\n/);
    const row = listed.stdout.split('\n').find((line) => line.startsWith(run.id));
    expect(row).toMatch(/greeting\s+succeeded\s+\S+\s+(\d+ms|\d+(\.\d{1,2})?s)\s+api\s+local/);
    const json = JSON.parse((await cli('executions', 'list', '--workflow', 'greeting', '-o', 'json')).stdout) as {
      executions: { id: string }[];
      total: number;
    };
    expect(json.executions.map((e) => e.id)).toContain(run.id);
    const bad = await cli('executions', 'list', '--limit', 'many');
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--limit: "many" is not an integer') as string,
    });
  });

  it('get and logs: the run, its tasks and its log lines', async () => {
    const shown = await cli('executions', 'get', run.id);
    expect(shown.stdout).toContain(`id:           ${run.id}\n`);
    expect(shown.stdout).toContain('status:       succeeded\n');
    expect(shown.stdout).toMatch(/TASK\s+AGENT\s+STATUS\s+ATTEMPTS\s+DURATION\s+MESSAGE\ngreet\s+\S+\s+succeeded\s+1/);
    const logs = await cli('executions', 'logs', run.id);
    expect(logs.stdout).toMatch(/INFO\s+\[greet\] hello from greet\n/);
    const missing = await cli('executions', 'get', 'no-such-run');
    expect(missing).toMatchObject({ code: 1, stderr: 'runner: no execution with id "no-such-run"\n' });
  });

  it('rerun: a new run of the same workflow, recorded as such', async () => {
    const again = await cli('executions', 'rerun', run.id, '-o', 'json');
    expect(again.code).toBe(0);
    const { id } = JSON.parse(again.stdout) as { id: string };
    expect(id).not.toBe(run.id);
    const { body } = await callApi<ApiRun>({ masterDir, base }, 'GET', `/executions/${id}`);
    expect(body).toMatchObject({ workflow_name: 'greeting', rerun_of: run.id });
    // Cancelling a run that has ended answers it as it is, and exits 1.
    for (;;) {
      const ended = await callApi<ApiRun>({ masterDir, base }, 'GET', `/executions/${id}?log=false`);
      if (ended.body.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const cancel = await cli('executions', 'cancel', id);
    expect(cancel).toMatchObject({ code: 1, stdout: `run ${id} (greeting) had already ended: succeeded\n` });
  });
});
