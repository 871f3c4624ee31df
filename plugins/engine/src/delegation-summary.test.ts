import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { confirmationQuestion, delegationSummary } from './delegation-summary.js';

const WORKFLOW = `version: "1.0"
groups:
  web: [ship]
tasks:
  - name: build
    exec: { script: return true }
  - name: push
    delegate_to: [web-1, web-2]
    depends_on: [build]
    exec: { script: return true }
  - name: ship
    delegate_to: "{{ vars.targets }}"
    depends_on: [push]
    exec: { script: return true }
  - name: report
    delegate_to: reporter
    exec: { script: return true }
`;

describe('the question before a run reaches agents', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'runner-delegation-')), 'deploy.yaml');
  writeFileSync(file, WORKFLOW);

  it('names each delegated task with its agents as written', async () => {
    const tasks = await delegationSummary({ source: { file } });
    expect(tasks).toEqual([
      { task: 'push', agents: 'web-1, web-2' },
      { task: 'ship', agents: '{{ vars.targets }}' },
      { task: 'report', agents: 'reporter' },
    ]);
    expect(confirmationQuestion('deploy', tasks)).toBe(
      'Run deploy on agents? These 3 tasks execute on remote hosts:\n' +
        '  push    on web-1, web-2\n' +
        '  ship    on {{ vars.targets }}\n' +
        '  report  on reporter\n' +
        '[y/N] ',
    );
  });

  it('counts only the group and what it depends on; --delegate-to sends every selected task', async () => {
    expect(await delegationSummary({ source: { file }, group: 'web' })).toEqual([
      { task: 'push', agents: 'web-1, web-2' },
      { task: 'ship', agents: '{{ vars.targets }}' },
    ]);
    const forced = await delegationSummary({ source: { content: WORKFLOW }, group: 'web', delegateTo: ['a1'] });
    expect(forced?.map((t) => `${t.task}@${t.agents}`)).toEqual(['build@a1', 'push@a1', 'ship@a1']);
  });

  it('asks anyway when the file cannot be read here', async () => {
    expect(await delegationSummary({ source: { file: join(tmpdir(), 'no-such-workflow.yaml') } })).toBeUndefined();
    expect(await delegationSummary({ source: { content: 'tasks: [' } })).toBeUndefined();
    expect(confirmationQuestion('x', undefined)).toBe(
      'Run x on agents? Its tasks may execute on remote hosts (the file could not be read here to list them). [y/N] ',
    );
  });
});
