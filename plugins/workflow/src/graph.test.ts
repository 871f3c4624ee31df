import { InvalidInputError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { dependencyClosure, describeCycle, findCycles, selectGroup, topologicalOrder } from './graph.js';
import { parseWorkflow } from './parse.js';

const node = (name: string, ...dependsOn: string[]) => ({ name, dependsOn });
const names = (tasks: readonly { name: string }[]) => tasks.map((t) => t.name);

describe('topologicalOrder', () => {
  it('keeps file order when every dependency points backwards', () => {
    const tasks = [node('a'), node('b', 'a'), node('c'), node('d', 'b', 'c')];
    expect(names(topologicalOrder(tasks))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('moves a task after a dependency written later, otherwise keeping file order', () => {
    const tasks = [node('deploy', 'build'), node('lint'), node('build'), node('notify')];
    expect(names(topologicalOrder(tasks))).toEqual(['lint', 'build', 'deploy', 'notify']);
  });

  it('returns the same objects and leaves the input alone', () => {
    const tasks = [node('b', 'a'), node('a')];
    const order = topologicalOrder(tasks);
    expect(order[0]).toBe(tasks[1]);
    expect(names(tasks)).toEqual(['b', 'a']);
  });

  it('refuses a cycle', () => {
    expect(() => topologicalOrder([node('a', 'b'), node('b', 'a')])).toThrow(
      new InvalidInputError('circular dependency: a -> b -> a'),
    );
  });

  it('refuses an unknown dependency', () => {
    expect(() => topologicalOrder([node('build'), node('ship', 'biuld')])).toThrow(
      new InvalidInputError('task "ship" depends on unknown task "biuld" (did you mean "build"?)'),
    );
  });
});

describe('findCycles', () => {
  it('finds none in a DAG', () => {
    expect(findCycles([node('a'), node('b', 'a'), node('c', 'a', 'b')])).toEqual([]);
  });

  it('reports a self-dependency', () => {
    expect(findCycles([node('a', 'a')]).map(describeCycle)).toEqual(['circular dependency: a -> a']);
  });

  it('starts the cycle at the task written first and names the entry that closes it', () => {
    // x leads the walk into the cycle at b, but a comes first in the file.
    const tasks = [node('x', 'b'), node('a', 'b'), node('b', 'c'), node('c', 'z', 'a'), node('z')];
    expect(findCycles(tasks)).toEqual([{ names: ['a', 'b', 'c', 'a'], closingTask: 'c', closingEntry: 1 }]);
  });

  it('reports separate cycles separately', () => {
    const tasks = [node('a', 'b'), node('b', 'a'), node('c', 'd'), node('d', 'c')];
    expect(findCycles(tasks).map(describeCycle)).toEqual([
      'circular dependency: a -> b -> a',
      'circular dependency: c -> d -> c',
    ]);
  });

  it('ignores unknown names', () => {
    expect(findCycles([node('a', 'nope')])).toEqual([]);
  });
});

describe('dependencyClosure', () => {
  it('holds the names and everything they depend on', () => {
    const tasks = [node('a'), node('b', 'a'), node('c', 'b'), node('d')];
    expect([...dependencyClosure(tasks, ['c'])].sort()).toEqual(['a', 'b', 'c']);
    expect([...dependencyClosure(tasks, [])]).toEqual([]);
  });
});

describe('selectGroup', () => {
  const { workflow } = parseWorkflow(
    [
      'version: "1"',
      'groups:',
      '  deploy: [ship]',
      '  checks: [lint, test]',
      'tasks:',
      '  - { name: lint, exec: { script: return true } }',
      '  - { name: build, exec: { script: return true } }',
      '  - { name: test, depends_on: build, exec: { script: return true } }',
      '  - { name: ship, depends_on: [test], exec: { script: return true } }',
      '  - { name: notify, exec: { script: return true } }',
    ].join('\n'),
    { file: 'wf.yaml' },
  );

  it('returns the group and its transitive dependencies in file order', () => {
    expect(names(selectGroup(workflow, 'deploy'))).toEqual(['build', 'test', 'ship']);
    expect(names(selectGroup(workflow, 'checks'))).toEqual(['lint', 'build', 'test']);
  });

  it('names the known groups for an unknown one', () => {
    expect(() => selectGroup(workflow, 'deplyo')).toThrow(
      new InvalidInputError('unknown group "deplyo" (did you mean "deploy"?); known groups: deploy, checks', {
        field: 'group',
      }),
    );
    expect(() => selectGroup(workflow, 'zzz')).toThrow(
      new InvalidInputError('unknown group "zzz"; known groups: deploy, checks', { field: 'group' }),
    );
  });

  it('says so when the workflow has no groups', () => {
    expect(() => selectGroup({ ...workflow, groups: {} }, 'deploy')).toThrow(
      new InvalidInputError('unknown group "deploy": the workflow defines no groups', { field: 'group' }),
    );
  });

  it('does not take inherited properties for groups', () => {
    expect(() => selectGroup(workflow, 'toString')).toThrow('unknown group "toString"');
  });
});
