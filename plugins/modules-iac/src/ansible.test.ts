import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createAnsibleModule, jsonDocument, summariseRun } from './ansible.js';

describe('ansible JSON output', () => {
  it('reads tasks per host and totals, and names each failure', () => {
    const summary = summariseRun({
      plays: [
        {
          play: { name: 'web' },
          tasks: [
            { task: { name: 'conf' }, hosts: { a: { changed: true }, b: { changed: false } } },
            {
              task: { name: 'start' },
              hosts: { a: { failed: true, msg: 'no unit' }, b: { unreachable: true, msg: 'ssh: timeout' } },
            },
            {
              task: { name: 'opt' },
              hosts: { a: { failed: true, msg: 'x', ignore_errors: true }, b: { skipped: true } },
            },
          ],
        },
      ],
      stats: {
        a: { ok: 2, changed: 1, failures: 1, unreachable: 0, skipped: 0 },
        b: { ok: 1, changed: 0, failures: 0, unreachable: 1, skipped: 1 },
      },
    });
    expect(summary.tasks.map((t) => `${t.host}/${t.task}:${t.status}`)).toEqual([
      'a/conf:changed',
      'b/conf:ok',
      'a/start:failed',
      'b/start:unreachable',
      'a/opt:failed',
      'b/opt:skipped',
    ]);
    expect(summary).toMatchObject({
      changed: true,
      success: false,
      failures: ['a: start: no unit', 'b: start: ssh: timeout'],
    });
  });

  it('finds the document after warnings', () => {
    expect(jsonDocument('[WARNING]: No inventory was parsed\n{\n  "plays": [],\n  "stats": {}\n}\n')).toEqual({
      plays: [],
      stats: {},
    });
    expect(jsonDocument('ERROR! the playbook could not be found')).toBeNull();
  });
});

// Debian's ansible package (ansible-core with the ansible.posix collection and its JSON callback),
// run for real against localhost over the local connection.
const ansible = spawnSync('ansible-playbook', ['--version']).status === 0;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!ansible)('ansible module against localhost', () => {
  const local = { inventory: 'localhost,', connection: 'local' };

  it('runs a playbook: changed the first time, not the second, nothing under dry-run (check mode)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-ansible-test-'));
    dirs.push(dir);
    const target = join(dir, 'app.conf');
    const playbook = join(dir, 'site.yml');
    writeFileSync(
      playbook,
      `- hosts: all
  gather_facts: false
  tasks:
    - name: write the config
      ansible.builtin.copy:
        dest: "{{ target }}"
        content: "port={{ port }}\\n"
`,
    );
    const module = createAnsibleModule();
    const extra_vars = { target, port: 8080 };
    const dry = await module.playbook(luaCallContext({ dryRun: true }).call, playbook, { ...local, extra_vars });
    expect(dry).toMatchObject({ changed: true, success: true, dry_run: true });
    expect(existsSync(target)).toBe(false);

    const { call } = luaCallContext();
    const first = (await module.playbook(call, playbook, { ...local, extra_vars })) as Record<string, any>;
    expect(first).toMatchObject({ changed: true, success: true, stats: { localhost: { changed: 1, failures: 0 } } });
    expect(first.tasks[0]).toMatchObject({ task: 'write the config', host: 'localhost', status: 'changed' });
    expect(readFileSync(target, 'utf8')).toBe('port=8080\n');
    expect(await module.playbook(call, playbook, { ...local, extra_vars })).toMatchObject({
      changed: false,
      success: true,
    });
  }, 60_000);

  it('runs an ad-hoc module with its arguments as a table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-ansible-test-'));
    dirs.push(dir);
    const module = createAnsibleModule();
    const { call } = luaCallContext();
    const made = (await module.module(
      call,
      'localhost',
      'ansible.builtin.file',
      { path: join(dir, 'd'), state: 'directory' },
      local,
    )) as Record<string, any>;
    expect(made).toMatchObject({ changed: true, tasks: [{ host: 'localhost', status: 'changed' }] });
  }, 60_000);
});
