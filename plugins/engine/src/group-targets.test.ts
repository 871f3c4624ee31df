// Group targets with the real parser and the real agent-groups plugin over a store in a temp dir:
// literal `group:<name>` entries become the members at the run's start, an unknown or empty group
// is refused at its task (file:line:column) or on the run's `delegate_to`, with a did-you-mean.
import { plugin as agentGroups } from '@runner/plugin-agent-groups';
import {
  AgentGroupsRef,
  WorkflowParserRef,
  type AgentGroups,
  type RunRequest,
  type WorkflowParser,
} from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expandRunGroups, expandTargets } from './group-targets.js';

let kernel: TestKernel;
let parser: WorkflowParser;
let groups: AgentGroups;
beforeEach(async () => {
  kernel = await createTestKernel({ plugins: [store, luaRuntime, template, workflow, agentGroups], profile: 'master' });
  await kernel.ready();
  parser = kernel.get(WorkflowParserRef);
  groups = kernel.get(AgentGroupsRef);
  await groups.create({ name: 'web', members: ['web-2', 'web-1'] });
  await groups.create({ name: 'db', members: ['db-1', 'web-1'] });
  await groups.create({ name: 'empty' });
});
afterEach(() => kernel.stop());

function expand(delegateTo: string, request: Partial<RunRequest> = {}) {
  const text = `version: "1.0"\ntasks:\n  - name: first\n    exec: { script: return true }\n  - name: ship\n    delegate_to: ${delegateTo}\n    exec: { script: return true }\n`;
  const { workflow: parsed } = parser.parse(text, { file: 'deploy.yaml' });
  return expandRunGroups(groups, parsed, parsed.tasks, { source: { content: text }, ...request });
}

describe('expandRunGroups', () => {
  it('replaces a group by its members, each agent once, where it first appears', () => {
    expect(expand('group:web').tasks[1].delegateTo).toEqual(['web-1', 'web-2']);
    expect(expand('[web-1, group:db, group:web]').tasks[1].delegateTo).toEqual(['web-1', 'db-1', 'web-2']);
    // Templates render at their task's turn; they stay as written.
    expect(expand('[group:db, "{{ vars.x }}"]').tasks[1].delegateTo).toEqual(['db-1', 'web-1', '{{ vars.x }}']);
    expect(expand('[web-9]').tasks[1].delegateTo).toEqual(['web-9']);
  });

  it('snapshots the members: a later change to the group does not reach an expanded run', async () => {
    const { tasks } = expand('group:web');
    await groups.addMembers('web', ['web-3']);
    expect(tasks[1].delegateTo).toEqual(['web-1', 'web-2']);
  });

  it('refuses an unknown or empty group at the task, with its position and the nearest group', () => {
    expect(() => expand('group:wbe')).toThrow(
      'deploy.yaml:5:5: tasks[1].delegate_to: task "ship": unknown agent group "wbe" (did you mean "web"?) (agent groups: db, empty, web)',
    );
    expect(() => expand('[web-1, group:empty]')).toThrow(
      'tasks[1].delegate_to: task "ship": agent group "empty" has no members (add some with runner agent group add)',
    );
  });

  it("expands the run's --delegate-to, and refuses an unknown group there on the field", () => {
    expect(expand('[web-1]', { delegateTo: ['group:db'] }).runAgents).toEqual(['db-1', 'web-1']);
    expect(() => expand('[web-1]', { delegateTo: ['group:dc'] })).toThrow(
      expect.objectContaining({
        message: 'delegate_to: unknown agent group "dc" (did you mean "db"?) (agent groups: db, empty, web)',
        details: { field: 'delegate_to' },
      }),
    );
  });
});

describe('expandTargets', () => {
  it('says so when this process has no agent groups', () => {
    expect(() => expandTargets(undefined, ['group:web'])).toThrow(
      'agent group "web": agent groups are not available in this process (the agent-groups plugin runs on a master)',
    );
    expect(expandTargets(undefined, ['web-1', 'web-1'])).toEqual(['web-1']);
  });
});
