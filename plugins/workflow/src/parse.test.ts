import { InvalidInputError, WorkflowValidationError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { parseValues, parseWorkflow, validateWorkflow } from './parse.js';
import type { ParseWorkflowOptions, WorkflowProblem } from './types.js';

const FILE = 'wf.yaml';

/** Lines joined, so that a line's number in the file is its index + 1 here. */
const yaml = (...lines: string[]) => lines.join('\n') + '\n';

const show = (p: WorkflowProblem) => `${p.line}:${p.column} ${p.path} | ${p.message}`;

function check(text: string, options: Partial<ParseWorkflowOptions> = {}) {
  const result = validateWorkflow(text, { file: FILE, ...options });
  return { problems: result.problems.map(show), warnings: result.warnings.map(show), workflow: result.workflow };
}

/** A valid file around one task whose extra lines are given (indented as task keys). */
function task(...lines: string[]) {
  return yaml(
    'version: "1"',
    'tasks:',
    '  - name: a',
    '    exec: { script: return true }',
    ...lines.map((l) => `    ${l}`),
  );
}

describe('a minimal workflow', () => {
  it('gets every default', () => {
    const { workflow, warnings } = parseWorkflow(task(), { file: FILE });
    expect(warnings).toEqual([]);
    expect(workflow).toEqual({
      file: FILE,
      version: '1',
      template: 'jinja',
      parallel: 1,
      vars: {},
      groups: {},
      values: {},
      tasks: [
        {
          name: 'a',
          exec: { script: 'return true' },
          dependsOn: [],
          delegation: { strategy: 'all' },
          dryRun: 'skip',
          ignoreErrors: false,
          source: { file: FILE, line: 3, column: 5, scriptLines: [4] },
        },
      ],
    });
  });
});

describe('the file as a whole', () => {
  it.each(['', '# just a comment\n', '~\n'])('refuses an empty file (%j)', (text) => {
    expect(check(text).problems).toEqual(['1:1  | the file is empty: a workflow needs at least version and tasks']);
  });

  it('refuses a top level that is not a mapping', () => {
    expect(check('- name: a\n').problems).toEqual([
      '1:1  | expected a mapping of workflow keys (version, tasks, ...) at the top level, found a list',
    ]);
  });

  it('reports YAML syntax errors alone, at their position', () => {
    expect(check(yaml('version: "1"', 'bogus: 1', 'tasks:', '\t- name: a')).problems).toEqual([
      '4:1  | invalid YAML: Tabs are not allowed as indentation',
    ]);
  });

  it('names a duplicate key at its second place', () => {
    expect(check(yaml('version: "1"', 'tasks: []', 'version: "1"')).problems).toEqual([
      '3:1  | duplicate key "version"',
    ]);
  });

  it('refuses a second YAML document', () => {
    expect(check(task() + '---\nversion: "1"\n').problems).toEqual([
      '5:1  | a second YAML document starts here; a workflow file holds one document',
    ]);
  });

  it('reports an unknown top-level key, suggesting a near one or listing the known ones', () => {
    expect(check(task() + 'taks: []\nflavour: x\nname: deploy\n').problems).toEqual([
      '5:1 taks | unknown top-level key "taks" (did you mean "tasks"?)',
      '6:1 flavour | unknown top-level key "flavour" (known keys: version, description, template, parallel, forks, memory_limit, stack, vars, groups, tasks, values)',
      '7:1 name | unknown top-level key "name" (a workflow is named by the command line or the saved flow, not in the file)',
    ]);
  });

  it('requires version and tasks', () => {
    expect(check(yaml('description: x')).problems).toEqual([
      '1:1 version | missing required key "version" (e.g. version: "1.0")',
      '1:1 tasks | missing required key "tasks"',
    ]);
  });

  it('reports every problem at once, in file order', () => {
    const text = yaml(
      'version: "2.0"',
      'parallel: 0',
      'tasks:',
      '  - name: a',
      '    exec: { script: "" }',
      '    timeout: soon',
      '  - exec: { script: x }',
    );
    expect(check(text).problems).toEqual([
      '1:10 version | version: unsupported version "2.0": this runner reads version 1 workflows (such as "1.0")',
      '2:11 parallel | parallel: expected an integer of at least 1, found the number 0',
      '5:21 tasks[0].exec.script | tasks[0].exec.script: the script is empty',
      '6:14 tasks[0].timeout | tasks[0].timeout: invalid duration "soon": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"',
      '7:5 tasks[1].name | tasks[1]: missing required key "name"',
    ]);
  });
});

describe('WorkflowValidationError', () => {
  const text = yaml(
    'version: "1"',
    'tasks:',
    '  - name: a',
    '    exec: { script: return true }',
    '    tmeout: 5s',
    '    retry: 0',
  );

  it('lists every problem as file:line:column: message', () => {
    let error: unknown;
    try {
      parseWorkflow(text, { file: 'deploy.yaml' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WorkflowValidationError);
    expect(error).toBeInstanceOf(InvalidInputError);
    const e = error as WorkflowValidationError;
    expect(e.code).toBe('invalid_workflow');
    expect(e.status).toBe(400);
    expect(e.message).toBe(
      [
        'deploy.yaml:5:5: tasks[0]: unknown key "tmeout" (did you mean "timeout"?)',
        'deploy.yaml:6:12: tasks[0].retry: expected an integer of at least 1, found the number 0',
      ].join('\n'),
    );
    expect(e.problems).toEqual([
      {
        file: 'deploy.yaml',
        line: 5,
        column: 5,
        path: 'tasks[0].tmeout',
        message: 'tasks[0]: unknown key "tmeout" (did you mean "timeout"?)',
      },
      {
        file: 'deploy.yaml',
        line: 6,
        column: 12,
        path: 'tasks[0].retry',
        message: 'tasks[0].retry: expected an integer of at least 1, found the number 0',
      },
    ]);
    expect(e.details).toEqual({ problems: e.problems });
  });

  it('carries the warnings found alongside', () => {
    const withWarning = text.replace('    tmeout: 5s\n', '    depends_on: [a, a]\n');
    try {
      parseWorkflow(withWarning, { file: FILE });
      expect.unreachable();
    } catch (e) {
      expect((e as WorkflowValidationError).warnings.map(show)).toEqual([
        '5:21 tasks[0].depends_on[1] | tasks[0].depends_on[1]: "a" is listed twice',
      ]);
    }
  });
});

describe('version', () => {
  it.each(['"1"', '"1.0"', '"1.2"', "'1.2.3'", '" 1.0 "'])('accepts %s', (v) => {
    const { workflow } = parseWorkflow(task().replace('version: "1"', `version: ${v}`), { file: FILE });
    expect(workflow.version).toBe(v.replace(/["']/g, '').trim());
  });

  it.each([
    ['1.0', '1:10 version | version: expected a string, found the number 1.0; quote it: version: "1.0"'],
    ['1', '1:10 version | version: expected a string, found the number 1; quote it: version: "1"'],
    [
      '"2.0"',
      '1:10 version | version: unsupported version "2.0": this runner reads version 1 workflows (such as "1.0")',
    ],
    [
      '"0.9"',
      '1:10 version | version: unsupported version "0.9": this runner reads version 1 workflows (such as "1.0")',
    ],
    ['"v1"', '1:10 version | version: invalid version "v1": expected a version number such as "1.0"'],
    ['"1.0.0.0"', '1:10 version | version: invalid version "1.0.0.0": expected a version number such as "1.0"'],
    ['[1]', '1:10 version | version: expected a string such as "1.0", found a list'],
    ['', '1:10 version | version: expected a string such as "1.0", found null'],
  ])('refuses version: %s', (v, problem) => {
    expect(check(task().replace('version: "1"', `version: ${v}`)).problems).toEqual([problem]);
  });
});

describe('description, template, parallel, forks and memory_limit', () => {
  it('reads them', () => {
    const text = yaml(
      'version: "1"',
      'description: |',
      '  Deploys.',
      'template: go',
      'parallel: 4',
      'forks: 3',
      'tasks:',
      '  - { name: a, exec: { script: x } }',
    );
    const { workflow } = parseWorkflow(text, { file: FILE });
    expect(workflow).toMatchObject({ description: 'Deploys.\n', template: 'go', parallel: 4, forks: 3 });
  });

  it('reads memory_limit as a size, or a whole number of MiB', () => {
    for (const [written, bytes] of [
      ['256MiB', 256 * 1024 ** 2],
      ['1 GiB', 1024 ** 3],
      ['300', 300 * 1024 ** 2],
    ] as const) {
      const { workflow } = parseWorkflow(`memory_limit: ${written}\n` + task(), { file: FILE });
      expect(workflow.memoryLimitBytes).toBe(bytes);
    }
  });

  it.each([
    ['description: 5', '1:14 description | description: expected a string, found the number 5'],
    [
      'template: jinja2',
      '1:11 template | template: expected "jinja" or "go", found the string "jinja2" (did you mean "jinja"?)',
    ],
    ['template: mustache', '1:11 template | template: expected "jinja" or "go", found the string "mustache"'],
    ['parallel: 0', '1:11 parallel | parallel: expected an integer of at least 1, found the number 0'],
    ['parallel: 1.5', '1:11 parallel | parallel: expected an integer of at least 1, found the number 1.5'],
    ['parallel: "2"', '1:11 parallel | parallel: expected an integer of at least 1, found the string "2"'],
    ['forks: 0', '1:8 forks | forks: expected an integer of at least 1, found the number 0'],
    ['memory_limit: 8MiB', '1:15 memory_limit | memory_limit: must be at least 32MiB'],
    [
      'memory_limit: lots',
      '1:15 memory_limit | memory_limit: expected a size such as 256MiB or 1GiB (or a whole number of MiB), found the string "lots"',
    ],
  ])('refuses %s', (line, problem) => {
    expect(check(line + '\n' + task()).problems).toEqual([problem]);
  });
});

describe('vars', () => {
  it('keeps strings and takes numbers and booleans as written', () => {
    const text =
      task() +
      yaml(
        'vars:',
        '  app: web',
        '  port: 8080',
        '  ratio: 1.50',
        '  mask: 0x1F',
        '  debug: true',
        '  quoted: "007"',
        '  empty: ""',
      );
    expect(parseWorkflow(text, { file: FILE }).workflow.vars).toEqual({
      app: 'web',
      port: '8080',
      ratio: '1.50',
      mask: '0x1F',
      debug: 'true',
      quoted: '007',
      empty: '',
    });
  });

  it('refuses other values and names that are not identifiers', () => {
    const text = task() + yaml('vars:', '  none:', '  list: [a]', '  my-var: x', '  9lives: x', '  map: { a: 1 }');
    expect(check(text).problems).toEqual([
      '6:8 vars.none | vars.none: expected a string, found null (write "" for an empty value)',
      '7:9 vars.list | vars.list: expected a string, found a list',
      '8:3 vars.my-var | vars: "my-var" is not a valid variable name (letters, digits and _, not starting with a digit)',
      '9:3 vars.9lives | vars: "9lives" is not a valid variable name (letters, digits and _, not starting with a digit)',
      '10:8 vars.map | vars.map: expected a string, found a mapping',
    ]);
  });

  it('must be a mapping', () => {
    expect(check(task() + 'vars: [a]\n').problems).toEqual([
      '5:7 vars | vars: expected a mapping of variable names to strings, found a list',
    ]);
  });

  it('keeps __proto__ as a variable, in a map without a prototype', () => {
    const { workflow } = parseWorkflow(task() + 'vars: { __proto__: x }\n', { file: FILE });
    expect(Object.keys(workflow.vars)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(workflow.vars)).toBeNull();
  });
});

describe('groups', () => {
  const tasks = yaml(
    'version: "1"',
    'tasks:',
    '  - { name: build, exec: { script: x } }',
    '  - { name: ship, exec: { script: x } }',
  );

  it('reads group name to task names', () => {
    const { workflow } = parseWorkflow(tasks + 'groups:\n  deploy: [build, ship]\n  one:\n    - ship\n', {
      file: FILE,
    });
    expect(workflow.groups).toEqual({ deploy: ['build', 'ship'], one: ['ship'] });
  });

  it('refuses what is not a list of task names', () => {
    const text = tasks + yaml('groups:', '  a: build', '  b: []', '  c: [build, 3]', '  bad name: [build]');
    expect(check(text).problems).toEqual([
      '6:6 groups.a | groups.a: expected a list of task names, found the string "build"',
      '7:6 groups.b | groups.b: a group needs at least one task',
      '8:14 groups.c[1] | groups.c[1]: expected a task name, found the number 3',
      '9:3 groups["bad name"] | groups: "bad name" is not a valid group name (a letter or _, then letters, digits, _ or -, at most 64 characters)',
    ]);
  });

  it('warns about a task listed twice', () => {
    const { warnings } = parseWorkflow(tasks + 'groups: { g: [build, build] }\n', { file: FILE });
    expect(warnings.map(show)).toEqual(['5:22 groups.g[1] | groups.g[1]: "build" is listed twice']);
  });

  it('must be a mapping', () => {
    expect(check(tasks + 'groups: [build]\n').problems).toEqual([
      '5:9 groups | groups: expected a mapping of group names to lists of task names, found a list',
    ]);
  });
});

describe('tasks', () => {
  it.each([
    ['tasks: []', '2:8 tasks | tasks: a workflow needs at least one task'],
    ['tasks: build', '2:8 tasks | tasks: expected a list of tasks, found the string "build"'],
    [
      'tasks:\n  - build',
      '3:5 tasks[0] | tasks[0]: expected a mapping (a task with name and exec), found the string "build"',
    ],
  ])('refuses %j', (tasks, problem) => {
    expect(check(`version: "1"\n${tasks}\n`).problems).toEqual([problem]);
  });

  it('requires name and exec, at the task', () => {
    expect(check(yaml('version: "1"', 'tasks:', '  - when: "true"')).problems).toEqual([
      '3:5 tasks[0].name | tasks[0]: missing required key "name"',
      '3:5 tasks[0].exec | tasks[0]: missing required key "exec" (exec: { script: ... })',
    ]);
  });

  it('reports unknown keys, suggesting a near one or listing the known ones', () => {
    expect(check(task('dependson: [a]', 'register: out', 'script: x')).problems).toEqual([
      '5:5 tasks[0].dependson | tasks[0]: unknown key "dependson" (did you mean "depends_on"?)',
      '6:5 tasks[0].register | tasks[0]: unknown key "register" (known keys: name, exec, depends_on, when, retry, timeout, loop, delegate_to, delegation, dry_run, ignore_errors)',
      '7:5 tasks[0].script | tasks[0]: unknown key "script" (a script goes under exec: write exec: { script: ... })',
    ]);
  });
});

describe('name', () => {
  it.each(['build', 'per-host', '_private', 'A1_b-2', 'x'.repeat(64)])('accepts %j', (name) => {
    expect(parseWorkflow(task().replace('name: a', `name: ${name}`), { file: FILE }).workflow.tasks[0].name).toBe(name);
  });

  it.each([
    [
      '"build app"',
      '3:11 tasks[0].name | tasks[0].name: "build app" is not a valid task name (a letter or _, then letters, digits, _ or -, at most 64 characters)',
    ],
    [
      '1st',
      '3:11 tasks[0].name | tasks[0].name: "1st" is not a valid task name (a letter or _, then letters, digits, _ or -, at most 64 characters)',
    ],
    [
      'a.b',
      '3:11 tasks[0].name | tasks[0].name: "a.b" is not a valid task name (a letter or _, then letters, digits, _ or -, at most 64 characters)',
    ],
    [
      'x'.repeat(65),
      `3:11 tasks[0].name | tasks[0].name: "${'x'.repeat(65)}" is not a valid task name (a letter or _, then letters, digits, _ or -, at most 64 characters)`,
    ],
    ['42', '3:11 tasks[0].name | tasks[0].name: expected a task name, found the number 42'],
    ['[a]', '3:11 tasks[0].name | tasks[0].name: expected a task name, found a list'],
  ])('refuses name: %s', (name, problem) => {
    expect(check(task().replace('name: a', `name: ${name}`)).problems).toEqual([problem]);
  });
});

describe('exec', () => {
  const withExec = (...lines: string[]) => yaml('version: "1"', 'tasks:', '  - name: a', ...lines);

  it.each([
    [
      ['    exec: echo hi'],
      '4:11 tasks[0].exec | tasks[0].exec: expected a mapping with a script key (exec: { script: ... }), found the string "echo hi"',
    ],
    [['    exec: {}'], '4:11 tasks[0].exec.script | tasks[0].exec: missing required key "script"'],
    [
      ['    exec: { script: 5 }'],
      '4:21 tasks[0].exec.script | tasks[0].exec.script: expected a string (a Lua script), found the number 5',
    ],
    [
      ['    exec:', '      script: |', '', '  '],
      '5:15 tasks[0].exec.script | tasks[0].exec.script: the script is empty',
    ],
    [
      ['    exec: { script: x, shell: bash }'],
      '4:24 tasks[0].exec.shell | tasks[0].exec: unknown key "shell" (known keys: script)',
    ],
  ])('refuses %j', (lines, problem) => {
    expect(check(withExec(...lines)).problems).toEqual([problem]);
  });

  it('reports a misspelt script key and the missing script together', () => {
    expect(check(withExec('    exec: { scirpt: x }')).problems).toEqual([
      '4:11 tasks[0].exec.script | tasks[0].exec: missing required key "script"',
      '4:13 tasks[0].exec.scirpt | tasks[0].exec: unknown key "scirpt" (did you mean "script"?)',
    ]);
  });

  it('keeps the script text exactly and records its file lines', () => {
    const text = withExec('    exec:', '      script: |', '        local a = 1', '', '        return a == 1');
    const [t] = parseWorkflow(text, { file: FILE }).workflow.tasks;
    expect(t.exec.script).toBe('local a = 1\n\nreturn a == 1\n');
    expect(t.source.scriptLines).toEqual([6, 7, 8]);
  });
});

describe('depends_on', () => {
  const two = (...lines: string[]) =>
    task() + yaml('  - name: b', '    exec: { script: x }', ...lines.map((l) => `    ${l}`));

  it('takes a name or a list of names', () => {
    expect(parseWorkflow(two('depends_on: a'), { file: FILE }).workflow.tasks[1].dependsOn).toEqual(['a']);
    expect(parseWorkflow(two('depends_on: [a]'), { file: FILE }).workflow.tasks[1].dependsOn).toEqual(['a']);
    expect(parseWorkflow(two('depends_on: []'), { file: FILE }).workflow.tasks[1].dependsOn).toEqual([]);
  });

  it.each([
    [
      'depends_on: 3',
      '7:17 tasks[1].depends_on | tasks[1].depends_on: expected a task name or a list of task names, found the number 3',
    ],
    ['depends_on: ""', '7:17 tasks[1].depends_on | tasks[1].depends_on: expected a task name, found an empty string'],
    [
      'depends_on: [a, {x: 1}]',
      '7:21 tasks[1].depends_on[1] | tasks[1].depends_on[1]: expected a task name, found a mapping',
    ],
    [
      'depends_on: [" "]',
      '7:18 tasks[1].depends_on[0] | tasks[1].depends_on[0]: expected a task name, found an empty string',
    ],
  ])('refuses %s', (line, problem) => {
    expect(check(two(line)).problems).toEqual([problem]);
  });

  it('warns about a name listed twice and keeps it once', () => {
    const { workflow, warnings } = parseWorkflow(two('depends_on: [a, a]'), { file: FILE });
    expect(workflow.tasks[1].dependsOn).toEqual(['a']);
    expect(warnings.map(show)).toEqual(['7:21 tasks[1].depends_on[1] | tasks[1].depends_on[1]: "a" is listed twice']);
  });
});

describe('when', () => {
  it.each([
    ['"{{ vars.go }}"', '{{ vars.go }}'],
    ['"{% if x %}true{% endif %}"', '{% if x %}true{% endif %}'],
    ['false', 'false'],
    ['true', 'true'],
    ['"no"', 'no'],
    ['"0"', '0'],
  ])('accepts when: %s', (value, stored) => {
    expect(parseWorkflow(task(`when: ${value}`), { file: FILE }).workflow.tasks[0].when).toBe(stored);
  });

  it('refuses a bare expression, which would always be true', () => {
    expect(check(task("when: vars.app == 'web'")).problems).toEqual([
      `5:11 tasks[0].when | tasks[0].when: "vars.app == 'web'" is not a template, so it would always be true; write the condition inside {{ }}, e.g. "{{ vars.app == 'web' }}"`,
    ]);
  });

  it('refuses Jinja statement tags under the Go engine', () => {
    const text = 'template: go\n' + task('when: "{% if x %}y{% endif %}"');
    expect(check(text).problems).toEqual([
      '6:11 tasks[0].when | tasks[0].when: "{% if x %}y{% endif %}" is not a template, so it would always be true; write the condition inside {{ }}, e.g. "{{ {% if x %}y{% endif %} }}"',
    ]);
  });

  it('refuses a number', () => {
    expect(check(task('when: 1')).problems).toEqual([
      '5:11 tasks[0].when | tasks[0].when: expected a template such as "{{ vars.enabled }}" or true/false, found the number 1',
    ]);
  });
});

describe('retry', () => {
  const retryOf = (value: string) => parseWorkflow(task(`retry: ${value}`), { file: FILE }).workflow.tasks[0].retry;

  it('takes a number of attempts, with the default delay and no backoff', () => {
    expect(retryOf('3')).toEqual({ attempts: 3, delayMs: 1000, backoff: 1 });
  });

  it('takes a mapping', () => {
    expect(retryOf('{ attempts: 5, delay: 2s, backoff: 2, max_delay: 1m }')).toEqual({
      attempts: 5,
      delayMs: 2000,
      backoff: 2,
      maxDelayMs: 60_000,
    });
    expect(retryOf('{ attempts: 2, delay: 5, backoff: 1.5 }')).toEqual({ attempts: 2, delayMs: 5000, backoff: 1.5 });
    expect(retryOf('{ attempts: 2, delay: 0 }')).toEqual({ attempts: 2, delayMs: 0, backoff: 1 });
  });

  it.each([
    ['retry: 0', '5:12 tasks[0].retry | tasks[0].retry: expected an integer of at least 1, found the number 0'],
    ['retry: 2.5', '5:12 tasks[0].retry | tasks[0].retry: expected an integer of at least 1, found the number 2.5'],
    [
      'retry: "3"',
      '5:12 tasks[0].retry | tasks[0].retry: expected a number of attempts or a mapping with attempts, delay, backoff, max_delay, found the string "3"',
    ],
    ['retry: { delay: 1s }', '5:12 tasks[0].retry.attempts | tasks[0].retry: missing required key "attempts"'],
    [
      'retry: { attempts: 0 }',
      '5:24 tasks[0].retry.attempts | tasks[0].retry.attempts: expected an integer of at least 1, found the number 0',
    ],
    [
      'retry: { attempts: 2, delays: 1s }',
      '5:27 tasks[0].retry.delays | tasks[0].retry: unknown key "delays" (did you mean "delay"?)',
    ],
    [
      'retry: { attempts: 2, delay: 2x }',
      '5:34 tasks[0].retry.delay | tasks[0].retry.delay: invalid duration "2x": unknown unit "x" (use ms, s, m, h or d)',
    ],
    [
      'retry: { attempts: 2, backoff: 0.5 }',
      '5:36 tasks[0].retry.backoff | tasks[0].retry.backoff: expected a number of at least 1, found the number 0.5',
    ],
    [
      'retry: { attempts: 2, delay: 2s, max_delay: 1s }',
      '5:49 tasks[0].retry.max_delay | tasks[0].retry.max_delay: 1s is shorter than delay (2s)',
    ],
    [
      'retry: { attempts: 2, max_delay: 0s }',
      '5:38 tasks[0].retry.max_delay | tasks[0].retry.max_delay: must be longer than 0',
    ],
  ])('refuses %s', (line, problem) => {
    expect(check(task(line)).problems).toEqual([problem]);
  });
});

describe('timeout', () => {
  it.each([
    ['30s', 30_000],
    ['45', 45_000],
    ['1.5h', 5_400_000],
    ['"250ms"', 250],
  ])('reads timeout: %s', (value, ms) => {
    expect(parseWorkflow(task(`timeout: ${value}`), { file: FILE }).workflow.tasks[0].timeoutMs).toBe(ms);
  });

  it.each([
    ['0s', 'tasks[0].timeout: must be longer than 0'],
    ['0', 'tasks[0].timeout: must be longer than 0'],
    ['-1s', 'tasks[0].timeout: invalid duration "-1s": must not be negative'],
    ['1h30m', 'tasks[0].timeout: invalid duration "1h30m": use one number and one unit, e.g. "90m"'],
    ['[1s]', 'tasks[0].timeout: expected a duration such as "30s", found a list'],
    ['true', 'tasks[0].timeout: expected a duration such as "30s", found the boolean true'],
  ])('refuses timeout: %s', (value, message) => {
    expect(check(task(`timeout: ${value}`)).problems).toEqual([`5:14 tasks[0].timeout | ${message}`]);
  });
});

describe('loop', () => {
  const loopOf = (value: string) => parseWorkflow(task(`loop: ${value}`), { file: FILE }).workflow.tasks[0].loop;

  it('takes a list of scalars and mappings', () => {
    expect(loopOf('[web-1, 2, true, { host: db, port: 5432, tags: [a] }]')).toEqual([
      'web-1',
      2,
      true,
      { host: 'db', port: 5432, tags: ['a'] },
    ]);
  });

  it('takes a template string', () => {
    expect(loopOf('"{{ vars.hosts }}"')).toBe('{{ vars.hosts }}');
  });

  it('warns about an empty list', () => {
    const { warnings } = parseWorkflow(task('loop: []'), { file: FILE });
    expect(warnings.map(show)).toEqual([
      '5:11 tasks[0].loop | tasks[0].loop: the list is empty, so the task never runs',
    ]);
  });

  it.each([
    [
      'loop: web-1',
      '5:11 tasks[0].loop | tasks[0].loop: expected a list or a template that renders to a list (e.g. "{{ vars.hosts }}"), found the string "web-1"; for one item write a list: ["..."]',
    ],
    [
      'loop: 3',
      '5:11 tasks[0].loop | tasks[0].loop: expected a list or a template that renders to a list (e.g. "{{ vars.hosts }}"), found the number 3',
    ],
    [
      'loop: { a: 1 }',
      '5:11 tasks[0].loop | tasks[0].loop: expected a list or a template that renders to a list (e.g. "{{ vars.hosts }}"), found a mapping',
    ],
    ['loop: [a, [b]]', '5:15 tasks[0].loop[1] | tasks[0].loop[1]: expected a scalar or a mapping, found a list'],
    ['loop: [a, null]', '5:15 tasks[0].loop[1] | tasks[0].loop[1]: expected a scalar or a mapping, found null'],
  ])('refuses %s', (line, problem) => {
    expect(check(task(line)).problems).toEqual([problem]);
  });
});

describe('delegate_to', () => {
  const agentsOf = (value: string) =>
    parseWorkflow(task(`delegate_to: ${value}`), { file: FILE }).workflow.tasks[0].delegateTo;

  it('takes a name, a list of names, or templates', () => {
    expect(agentsOf('web-1')).toEqual(['web-1']);
    expect(agentsOf('[web-1, web-2]')).toEqual(['web-1', 'web-2']);
    expect(agentsOf('"{{ vars.target }}"')).toEqual(['{{ vars.target }}']);
  });

  it.each([
    ['delegate_to: []', '5:18 tasks[0].delegate_to | tasks[0].delegate_to: the list is empty; name at least one agent'],
    [
      'delegate_to: ""',
      '5:18 tasks[0].delegate_to | tasks[0].delegate_to: expected an agent name, found an empty string',
    ],
    [
      'delegate_to: 5',
      '5:18 tasks[0].delegate_to | tasks[0].delegate_to: expected an agent name or a list of agent names, found the number 5',
    ],
    [
      'delegate_to: [web-1, 5]',
      '5:26 tasks[0].delegate_to[1] | tasks[0].delegate_to[1]: expected an agent name, found the number 5',
    ],
  ])('refuses %s', (line, problem) => {
    expect(check(task(line)).problems).toEqual([problem]);
  });

  it('warns about an agent listed twice', () => {
    const { workflow, warnings } = parseWorkflow(task('delegate_to: [w, w]'), { file: FILE });
    expect(workflow.tasks[0].delegateTo).toEqual(['w']);
    expect(warnings.map(show)).toEqual(['5:22 tasks[0].delegate_to[1] | tasks[0].delegate_to[1]: "w" is listed twice']);
  });
});

describe('delegation', () => {
  const delegationOf = (value: string) =>
    parseWorkflow(task('delegate_to: [w1, w2]', `delegation: ${value}`), { file: FILE }).workflow.tasks[0].delegation;

  it.each(['all', 'round_robin', 'failover'])('takes %s, as a string or a mapping', (strategy) => {
    expect(delegationOf(strategy)).toEqual({ strategy });
    expect(delegationOf(`{ strategy: ${strategy} }`)).toEqual({ strategy });
  });

  it('takes a conditional strategy with its condition', () => {
    expect(delegationOf('{ strategy: conditional, when: "{{ agent.cpu_usage < 80 }}" }')).toEqual({
      strategy: 'conditional',
      when: '{{ agent.cpu_usage < 80 }}',
    });
  });

  it.each([
    [
      'conditional',
      '6:17 tasks[0].delegation | tasks[0].delegation: conditional needs a condition: write delegation: { strategy: conditional, when: "{{ agent.cpu_usage < 80 }}" }',
    ],
    [
      'roundrobin',
      '6:17 tasks[0].delegation | tasks[0].delegation: expected "all", "round_robin", "failover" or a mapping with strategy and when, found the string "roundrobin" (did you mean "round_robin"?)',
    ],
    [
      '3',
      '6:17 tasks[0].delegation | tasks[0].delegation: expected "all", "round_robin", "failover" or a mapping with strategy and when, found the number 3',
    ],
    [
      '{ strategy: conditional }',
      '6:17 tasks[0].delegation.when | tasks[0].delegation: strategy conditional needs a when condition, e.g. when: "{{ agent.cpu_usage < 80 }}"',
    ],
    [
      '{ strategy: all, when: "{{ x }}" }',
      '6:34 tasks[0].delegation.when | tasks[0].delegation.when: only strategy conditional takes a when condition',
    ],
    ['{ when: "{{ x }}" }', '6:17 tasks[0].delegation.strategy | tasks[0].delegation: missing required key "strategy"'],
    [
      '{ strategy: random }',
      '6:29 tasks[0].delegation.strategy | tasks[0].delegation.strategy: expected "all", "round_robin", "failover" or "conditional", found the string "random"',
    ],
    [
      '{ strategy: all, wehn: x }',
      '6:34 tasks[0].delegation.wehn | tasks[0].delegation: unknown key "wehn" (did you mean "when"?)',
    ],
    [
      '{ strategy: conditional, when: "cpu < 80" }',
      '6:48 tasks[0].delegation.when | tasks[0].delegation.when: "cpu < 80" is not a template, so it would always be true; write the condition inside {{ }}, e.g. "{{ cpu < 80 }}"',
    ],
  ])('refuses delegation: %s', (value, problem) => {
    expect(check(task('delegate_to: [w1, w2]', `delegation: ${value}`)).problems).toEqual([problem]);
  });

  it('warns that delegation without delegate_to does nothing', () => {
    const { warnings } = parseWorkflow(task('delegation: failover'), { file: FILE });
    expect(warnings.map(show)).toEqual([
      '5:5 tasks[0].delegation | tasks[0].delegation: has no effect without delegate_to',
    ]);
  });
});

describe('dry_run and ignore_errors', () => {
  it('reads them', () => {
    const [t] = parseWorkflow(task('dry_run: run', 'ignore_errors: true'), { file: FILE }).workflow.tasks;
    expect(t).toMatchObject({ dryRun: 'run', ignoreErrors: true });
  });

  it.each([
    ['dry_run: true', '5:14 tasks[0].dry_run | tasks[0].dry_run: expected "skip" or "run", found the boolean true'],
    [
      'dry_run: skp',
      '5:14 tasks[0].dry_run | tasks[0].dry_run: expected "skip" or "run", found the string "skp" (did you mean "skip"?)',
    ],
    [
      'ignore_errors: "yes"',
      '5:20 tasks[0].ignore_errors | tasks[0].ignore_errors: expected true or false, found the string "yes"',
    ],
    [
      'ignore_errors: 1',
      '5:20 tasks[0].ignore_errors | tasks[0].ignore_errors: expected true or false, found the number 1',
    ],
  ])('refuses %s', (line, problem) => {
    expect(check(task(line)).problems).toEqual([problem]);
  });
});

describe('values', () => {
  it('reads per-agent mappings of any data', () => {
    const text =
      task() + yaml('values:', '  web-1: { port: 8081, tls: { on: true }, hosts: [a, b] }', '  localhost: {}');
    expect(parseWorkflow(text, { file: FILE }).workflow.values).toEqual({
      'web-1': { port: 8081, tls: { on: true }, hosts: ['a', 'b'] },
      localhost: {},
    });
  });

  it.each([
    ['values: [a]', '5:9 values | values: expected a mapping of agent names to mappings of values, found a list'],
    ['values: { web-1: 5 }', '5:18 values.web-1 | values.web-1: expected a mapping of values, found the number 5'],
    ['values: { "web 1": [] }', '5:20 values["web 1"] | values["web 1"]: expected a mapping of values, found a list'],
  ])('refuses %s', (line, problem) => {
    expect(check(task() + line + '\n').problems).toEqual([problem]);
  });
});

describe('anchors, aliases and merge keys', () => {
  it('resolves aliases and merges <<: *defaults under the task’s own keys', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    exec: &run { script: return true }',
      '    retry: &retry { attempts: 3, delay: 1s }',
      '    timeout: &t 10s',
      '  - <<: { exec: *run, retry: *retry, timeout: *t }',
      '    name: b',
      '    timeout: 5s',
    );
    const [, b] = parseWorkflow(text, { file: FILE }).workflow.tasks;
    expect(b).toMatchObject({
      name: 'b',
      exec: { script: 'return true' },
      retry: { attempts: 3, delayMs: 1000 },
      timeoutMs: 5000,
    });
  });

  it('takes the first of several merged mappings', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    exec: &e { script: x }',
      '  - <<: [{ timeout: 1s }, { timeout: 2s, exec: *e }]',
      '    name: b',
    );
    const [, b] = parseWorkflow(text, { file: FILE }).workflow.tasks;
    expect(b).toMatchObject({ name: 'b', timeoutMs: 1000, exec: { script: 'x' } });
  });

  it('points at the anchored node for a problem inside an alias', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    exec: { script: x }',
      '    retry: &r { attempts: 0 }',
      '  - name: b',
      '    exec: { script: x }',
      '    retry: *r',
    );
    expect(check(text).problems).toEqual([
      '5:27 tasks[0].retry.attempts | tasks[0].retry.attempts: expected an integer of at least 1, found the number 0',
      '5:27 tasks[1].retry.attempts | tasks[1].retry.attempts: expected an integer of at least 1, found the number 0',
    ]);
  });

  it('reports an alias without an anchor, and a merge of something else than a mapping', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    exec: *nope',
      '  - <<: [1]',
      '    name: b',
      '    exec: { script: x }',
    );
    expect(check(text).problems).toEqual([
      '4:11 tasks[0].exec | tasks[0].exec: unknown alias "*nope" (no anchor &nope before it)',
      '5:10 tasks[1] | tasks[1]: << must merge a mapping (an alias such as *defaults), found the number 1',
    ]);
  });

  it('stops an alias bomb in values and loop items quickly, with one problem', () => {
    const bomb = ['l0: &l0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i <= 9; i++)
      bomb.push(
        `l${i}: &l${i} [${Array(9)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    const values = task() + yaml('values:', '  web:', ...bomb.map((l) => `    ${l}`));
    const started = Date.now();
    const tooMany = (problems: string[], path: string) => {
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        new RegExp(`^\\d+:\\d+ ${path}\\S* \\| ${path}\\S*: too many nodes after expanding aliases$`),
      );
    };
    tooMany(check(values).problems, 'values\\.web\\.l');
    const loop = yaml(
      'version: "1"',
      'x:',
      ...bomb.map((l) => `  ${l}`),
      'tasks:',
      '  - name: a',
      '    exec: { script: x }',
      '    loop: [{ a: *l9 }]',
    );
    tooMany(
      check(loop).problems.filter((p) => !p.includes('unknown top-level key')),
      'tasks\\[0\\]\\.loop\\[0\\]\\.a',
    );
    // A ceiling, not a speed: expanded, the bomb's 9^10 nodes would take hours (and the memory).
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('computes merges of merges once', () => {
    const lines = ['version: "1"', 'm0: &m0 { timeout: 1s }'];
    for (let i = 1; i <= 12; i++)
      lines.push(
        `m${i}: &m${i} { <<: [${Array(9)
          .fill(`*m${i - 1}`)
          .join(', ')}] }`,
      );
    lines.push('tasks:', '  - { <<: *m12, name: a, exec: { script: x } }');
    const started = Date.now();
    const result = validateWorkflow(yaml(...lines), { file: FILE });
    expect(result.problems).toHaveLength(13); // the m0..m12 keys, unknown at the top level
    // A ceiling, not a speed: merged anew each time, the 9^12 merges would take hours.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('refuses values that contain themselves through an alias', () => {
    const text = task() + yaml('values:', '  web: &w', '    self: *w');
    expect(check(text).problems).toEqual([
      '7:11 values.web.self | values.web.self: an alias refers to a node that contains it',
    ]);
  });
});

describe('YAML warnings', () => {
  it('passes them on with their position', () => {
    const { warnings } = parseWorkflow(task('when: !custom "true"'), { file: FILE });
    expect(warnings.map(show)).toEqual(['5:11  | YAML: Unresolved tag: !custom']);
  });
});

describe('parseValues (a --values file)', () => {
  it('reads agent name to mapping', () => {
    expect(parseValues('web-1:\n  port: 9000\nlocalhost: { debug: true }\n', { file: 'v.yaml' })).toEqual({
      'web-1': { port: 9000 },
      localhost: { debug: true },
    });
  });

  it('reads an empty file as no values', () => {
    expect(parseValues('# nothing yet\n', { file: 'v.yaml' })).toEqual({});
  });

  it('refuses other shapes with positions', () => {
    expect(() => parseValues('web-1: 5\ndb: [1]\n', { file: 'v.yaml' })).toThrow(
      new WorkflowValidationError([
        {
          file: 'v.yaml',
          line: 1,
          column: 8,
          path: 'web-1',
          message: 'web-1: expected a mapping of values, found the number 5',
        },
        { file: 'v.yaml', line: 2, column: 5, path: 'db', message: 'db: expected a mapping of values, found a list' },
      ]),
    );
    expect(() => parseValues('- a\n', { file: 'v.yaml' })).toThrow(
      'v.yaml:1:1: top level: expected a mapping of agent names to mappings of values, found a list',
    );
    expect(() => parseValues('a: [\n', { file: 'v.yaml' })).toThrow(/^v\.yaml:2:1: invalid YAML: /);
  });
});
