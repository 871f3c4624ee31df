// Saved flows on a real `runner server`, through the REST API and `runner flow` / `runner run`:
// validation at save (the errors `runner run` prints), versions, diff, restore, the 409 of a stale
// save, search, export/import byte for byte, and running a version of a saved flow.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callApi, runRunner, spawnRunner, startFleet, stopAll, tempDataDir } from './helpers.js';

// Each CLI call is a process start on a machine shared with other work: a generous ceiling.
vi.setConfig({ testTimeout: 180_000 });

const children: ReturnType<typeof spawnRunner>[] = [];
let masterDir: string;
let base: string;
let work: string;

beforeAll(async () => {
  work = tempDataDir('runner-e2e-flows-work-');
  ({ masterDir, base } = await startFleet('runner-e2e-flows', [], children));
}, 60_000);
afterAll(() => stopAll(children));

const api = <T = any>(method: string, path: string, body?: unknown) =>
  callApi<T>({ masterDir, base }, method, path, body);
const runner = (...args: string[]) => runRunner(args, { env: { RUNNER_DATA_DIR: masterDir }, cwd: work });
const says = (word: string) =>
  `version: "1.0"\ntasks:\n  - name: say\n    exec:\n      script: 'log.info("${word}"); return true, "${word}"'\n`;
const file = (name: string, text: string) => {
  writeFileSync(join(work, name), text);
  return name;
};

describe('runner flow and /api/v1/flows', () => {
  it('refuses an invalid workflow at save with the problems runner run prints', async () => {
    const broken = file('broken.yaml', 'version: "1.0"\ntasks:\n  - name: x\n    exec:\n      script: "return ("\n');
    const run = await runner('run', broken);
    const add = await runner('flow', 'add', 'broken', '--file', broken);
    expect(add.code).toBe(2);
    expect(run.stderr).toMatch(/^runner: broken\.yaml:5:\d+: /);
    expect(add.stderr).toBe(run.stderr);
  });

  it('saves versions from the CLI, diffs, restores and runs an old version', async () => {
    expect(
      (await runner('flow', 'add', 'greet', '--file', file('g1.yaml', says('hello')), '--tags', 'demo,web')).stdout,
    ).toBe('flow greet saved (version 1)\n');
    const update = await runner('flow', 'update', 'greet', '--file', file('g2.yaml', says('bonjour')), '-m', 'french');
    expect(update.stdout).toBe('flow greet saved (version 2)\n');
    const history = await runner('flow', 'history', 'greet');
    expect(history.stdout).toMatch(/^VERSION +SAVED +AUTHOR +COMMIT +MESSAGE\n2 .+ - +french\n1 .+ - +created\n$/);
    const diff = await runner('flow', 'diff', 'greet');
    expect(diff.stdout).toContain(
      `-      script: 'log.info("hello"); return true, "hello"'\n+      script: 'log.info("bonjour")`,
    );

    // runner run <name> --version 1 runs the saved flow's first version (no file of that name here).
    const old = await runner('run', 'greet', '--version', '1', '--output', 'json');
    expect(old.code).toBe(0);
    expect(old.stdout).toContain('"message":"hello"');
    expect((await runner('flow', 'restore', 'greet', '1')).stdout).toBe(
      'flow greet: version 1 restored as version 3\n',
    );
    const flow = await api('GET', '/flows/greet');
    expect(flow.body).toMatchObject({ version: 3, yaml: says('hello'), tags: ['demo', 'web'] });
    await expect.poll(async () => (await api('GET', '/flows/greet')).body.stats.executions).toBe(1);
    expect((await api('GET', '/flows/greet')).body.stats).toMatchObject({ succeeded: 1, success_rate: 1 });
    const shown = await runner('flow', 'get', 'greet', '--show-path');
    expect(shown.stdout).toContain('path:        greet.yaml@3');
    expect(shown.stdout).toContain('runs:        1 (success 100%');
  });

  it('answers 409 with what changed when a save starts from an older version', async () => {
    await api('POST', '/flows', { name: 'edit', yaml: says('a') });
    expect((await api('PUT', '/flows/edit', { yaml: says('b'), base_version: 1, message: 'first' })).status).toBe(200);
    const stale = await api('PUT', '/flows/edit', { yaml: says('c'), base_version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toBe(
      'flow "edit" changed since version 1 (now 2: 2 by local); reload it and apply your change again',
    );
    expect(stale.body.error.details).toMatchObject({
      current_version: 2,
      versions: [{ version: 2, message: 'first' }],
    });
    expect((await api('GET', '/flows/edit')).body.yaml).toBe(says('b'));
  });

  it('searches by name, description and tag; lists flows with the workflow files', async () => {
    await api('POST', '/flows', {
      name: 'nightly-backup',
      yaml: says('b'),
      description: 'Dumps the DB',
      tags: ['ops'],
    });
    const names = async (query: string) =>
      (await api<{ flows: { name: string }[] }>('GET', `/flows?${query}`)).body.flows.map((f) => f.name);
    expect(await names('search=BACKUP')).toEqual(['nightly-backup']);
    expect(await names('search=dumps')).toEqual(['nightly-backup']);
    expect(await names('tag=web')).toEqual(['greet']);
    mkdirSync(join(masterDir, 'workflows'), { recursive: true });
    writeFileSync(join(masterDir, 'workflows', 'on-disk.yaml'), says('disk'));
    const listing = await api<{ workflows: { name: string; kind: string }[] }>('GET', '/workflows');
    expect(listing.body.workflows).toContainEqual({ name: 'on-disk', kind: 'file', path: 'on-disk.yaml' });
    expect(listing.body.workflows.filter((w) => w.kind === 'flow').map((w) => w.name)).toContain('greet');
  });

  it('exports with history and imports back byte for byte; a conflict imports nothing', async () => {
    const crlf = 'version: "1.0"\r\ntasks:\r\n  - name: t   \r\n    exec:\r\n      script: return true\r\n';
    await api('POST', '/flows', { name: 'crlf', yaml: crlf });
    const exported = await runner('flow', 'export', 'greet', 'crlf', '--history');
    expect(exported.code).toBe(0);
    const path = file('flows.json', exported.stdout);
    const conflict = await runner('flow', 'import', '--file', path);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('nothing imported: greet (a flow of that name exists), crlf');

    expect((await api('DELETE', '/flows/greet')).status).toBe(204);
    expect((await api('DELETE', '/flows/crlf')).status).toBe(204);
    expect((await runner('flow', 'import', '--file', path)).stdout).toBe('imported 2 flow(s): greet, crlf\n');
    const again = await api('POST', '/flows/export', { names: ['greet', 'crlf'], history: true });
    const before = JSON.parse(readFileSync(join(work, path), 'utf8'));
    expect(again.body.flows).toEqual(before.flows);
    expect((await api('GET', '/flows/crlf')).body.yaml).toBe(crlf);
  });

  it('runs an inactive flow by hand, recorded as such', async () => {
    expect((await api('POST', '/flows/edit/deactivate')).body.active).toBe(false);
    const run = await api('POST', '/flows/edit/run', { vars: {} });
    expect(run.status).toBe(202);
    expect(run.body).toMatchObject({ outcome: 'started', inactive: true, version: 2 });
    expect((await api('GET', '/flows?active=false')).body.flows.map((f: { name: string }) => f.name)).toEqual(['edit']);
    // The dashboard's workflows tile counts them (contributed through DashboardTilesRef).
    const { total } = (await api('GET', '/flows?limit=1')).body;
    const tiles = (await api<{ tiles: { id: string; value?: number; detail?: string }[] }>('GET', '/dashboard')).body
      .tiles;
    expect(tiles.find((t) => t.id === 'workflows')).toMatchObject({ value: total, detail: `${total - 1} active` });
  });
});
