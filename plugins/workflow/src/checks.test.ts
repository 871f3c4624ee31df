import { describe, expect, it, vi } from 'vitest';
import { fakeCheckScript, fakeTemplateVariables } from '../test-fixtures/checkers.js';
import { parseWorkflow, validateWorkflow } from './parse.js';
import type { ParseWorkflowOptions, WorkflowProblem } from './types.js';

const FILE = 'wf.yaml';
const yaml = (...lines: string[]) => lines.join('\n') + '\n';
const show = (p: WorkflowProblem) => `${p.line}:${p.column} ${p.path} | ${p.message}`;

function check(text: string, options: Partial<ParseWorkflowOptions> = {}) {
  const result = validateWorkflow(text, { file: FILE, ...options });
  return { problems: result.problems.map(show), warnings: result.warnings.map(show) };
}

const templates = { templateVariables: fakeTemplateVariables };

describe('graph checks', () => {
  it('points at the second of two tasks with one name', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: build',
      '    exec: { script: x }',
      '  - name: build',
      '    exec: { script: x }',
    );
    expect(check(text).problems).toEqual([
      '5:11 tasks[1].name | tasks[1].name: duplicate task name "build" (first defined at line 3)',
    ]);
  });

  it('names unknown tasks in depends_on and groups where they are written', () => {
    const text = yaml(
      'version: "1"',
      'groups:',
      '  deploy: [build, shp]',
      'tasks:',
      '  - name: build',
      '    exec: { script: x }',
      '  - name: ship',
      '    depends_on: biuld',
      '    exec: { script: x }',
      '  - name: notify',
      '    depends_on: [ship, zzz]',
      '    exec: { script: x }',
    );
    expect(check(text).problems).toEqual([
      '3:19 groups.deploy[1] | groups.deploy[1]: unknown task "shp" (did you mean "ship"?)',
      '8:17 tasks[1].depends_on | tasks[1].depends_on: unknown task "biuld" (did you mean "build"?)',
      '11:24 tasks[2].depends_on[1] | tasks[2].depends_on[1]: unknown task "zzz"',
    ]);
  });

  it('reports a cycle at the entry that closes it', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    depends_on: [c]',
      '    exec: { script: x }',
      '  - name: b',
      '    depends_on: [a]',
      '    exec: { script: x }',
      '  - name: c',
      '    depends_on: [b]',
      '    exec: { script: x }',
      '  - name: self',
      '    depends_on: self',
      '    exec: { script: x }',
    );
    expect(check(text).problems).toEqual([
      '7:18 tasks[1].depends_on[0] | circular dependency: a -> c -> b -> a',
      '13:17 tasks[3].depends_on | circular dependency: self -> self',
    ]);
  });

  it('reports two-task cycles in the contract’s words', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - { name: a, depends_on: [b], exec: { script: x } }',
      '  - { name: b, depends_on: [a], exec: { script: x } }',
    );
    expect(check(text).problems).toEqual(['4:29 tasks[1].depends_on[0] | circular dependency: a -> b -> a']);
  });
});

describe('template variables', () => {
  const wf = (...taskLines: string[]) =>
    yaml(
      'version: "1"',
      'vars: { app: web, region: eu }',
      'tasks:',
      '  - name: build',
      '    exec: { script: return true }',
      '  - name: ship',
      '    depends_on: [build]',
      ...taskLines.map((l) => `    ${l}`),
    );

  it('accepts the known roots, declared vars, and dependencies’ results', () => {
    const text = wf(
      'when: "{{ vars.app == \'web\' and not dry_run }}"',
      'delegate_to: "{{ values.target }}"',
      'exec:',
      '  script: |',
      '    log.info("{{ task.name }} {{ workflow.run_id }} {{ env.HOME }} {{ agent.name }}")',
      '    return "{{ tasks.build.outputs.artifact }}"',
    );
    expect(check(text, templates)).toEqual({ problems: [], warnings: [] });
  });

  it('reports an unknown root, suggesting a near one', () => {
    const text = wf('when: "{{ itme }} {{ config.x }}"', 'loop: [1]', 'exec: { script: x }');
    expect(check(text, templates).problems).toEqual([
      '8:15 tasks[1].when | tasks[1].when: unknown template variable "itme" (did you mean "item"?)',
      '8:26 tasks[1].when | tasks[1].when: unknown template variable "config" (known: vars, values, item, loop_index, task, workflow, env, tasks, dry_run, agent, stack, secrets)',
    ]);
  });

  it('reports a var that vars does not declare', () => {
    const text = wf('exec:', '  script: |', '    -- {{ vars.ap }}', '    -- {{ vars.zone }}');
    expect(check(text, templates).problems).toEqual([
      '10:15 tasks[1].exec.script | tasks[1].exec.script: "vars.ap" is not declared in vars (did you mean "vars.app"?)',
      '11:15 tasks[1].exec.script | tasks[1].exec.script: "vars.zone" is not declared in vars (declared: app, region)',
    ]);
    const noVars = yaml('version: "1"', 'tasks:', '  - { name: a, exec: { script: "{{ vars.x }}" } }');
    expect(check(noVars, templates).problems).toEqual([
      '3:36 tasks[0].exec.script | tasks[0].exec.script: "vars.x" is not declared in vars (the workflow declares no vars)',
    ]);
  });

  it('allows item and loop_index only inside a loop’s iterations', () => {
    const text = wf(
      'loop: "{{ item }}"',
      'delegate_to: "{{ item }}"',
      'exec: { script: "return {{ loop_index }}" }',
      'when: "{{ loop_index > 1 }}"',
    );
    expect(check(text, templates).problems).toEqual([
      '8:15 tasks[1].loop | tasks[1].loop: "item" is not defined here: the loop is rendered before its first iteration',
    ]);
    const noLoop = wf('exec: { script: "return {{ item.name }}" }');
    expect(check(noLoop, templates).problems).toEqual([
      '8:32 tasks[1].exec.script | tasks[1].exec.script: "item" is only defined in a task with loop',
    ]);
  });

  it('checks templates inside literal loop items', () => {
    const text = wf('loop:', '  - "{{ vars.app }}"', '  - { host: "{{ vars.hots }}" }', 'exec: { script: x }');
    expect(check(text, templates).problems).toEqual([
      '10:21 tasks[1].loop[1].host | tasks[1].loop[1].host: "vars.hots" is not declared in vars (declared: app, region)',
    ]);
  });

  it('checks the condition of conditional delegation', () => {
    const text = wf(
      'delegate_to: [a, b]',
      'delegation: { strategy: conditional, when: "{{ agnet.cpu < 80 }}" }',
      'exec: { script: x }',
    );
    expect(check(text, templates).problems).toEqual([
      '9:52 tasks[1].delegation.when | tasks[1].delegation.when: unknown template variable "agnet" (did you mean "agent"?)',
    ]);
  });

  it('makes tasks.<unknown> an error and tasks.<not a dependency> a warning', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: build',
      '    exec: { script: return true }',
      '  - name: test',
      '    depends_on: build',
      '    exec: { script: return true }',
      '  - name: ship',
      '    depends_on: test',
      '    exec:',
      '      script: |',
      '        local a = "{{ tasks.build.outputs.x }}"',
      '        local b = "{{ tasks.biuld.outputs.x }}"',
      '        local c = "{{ tasks.lint.status }} {{ tasks.lint.outputs.y }}"',
      '        local d = "{{ tasks.ship.status }}"',
      '  - name: lint',
      '    exec: { script: return true }',
    );
    const result = check(text, templates);
    expect(result.problems).toEqual([
      '13:23 tasks[2].exec.script | tasks[2].exec.script: "tasks.biuld" names no task (did you mean "tasks.build"?)',
    ]);
    expect(result.warnings).toEqual([
      '14:23 tasks[2].exec.script | tasks[2].exec.script: task "ship" reads "tasks.lint" but does not depend on it; add "lint" to depends_on so that it runs first',
      '15:23 tasks[2].exec.script | tasks[2].exec.script: task "ship" reads its own result "tasks.ship", which is not set while it runs',
    ]);
  });

  it('reads bracketed task names', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - { name: per-host, exec: { script: x } }',
      '  - name: after',
      '    depends_on: per-host',
      '    exec: { script: "return \'{{ tasks[\\"per-host\\"].outputs }}\'" }',
    );
    expect(check(text, templates)).toEqual({ problems: [], warnings: [] });
  });

  it('places variables inside |-, > and quoted scalars', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    when: >',
      '      {{ vars.a1 and',
      '      vars.a2 }}',
      "    delegate_to: '{{ vars.a3 }}'",
      '    exec:',
      '      script: |-',
      '        x = 1',
      '          y = "{{ vars.a4 }}"',
    );
    expect(check(text, templates).problems).toEqual([
      '5:10 tasks[0].when | tasks[0].when: "vars.a1" is not declared in vars (the workflow declares no vars)',
      '6:7 tasks[0].when | tasks[0].when: "vars.a2" is not declared in vars (the workflow declares no vars)',
      '7:22 tasks[0].delegate_to | tasks[0].delegate_to: "vars.a3" is not declared in vars (the workflow declares no vars)',
      '11:19 tasks[0].exec.script | tasks[0].exec.script: "vars.a4" is not declared in vars (the workflow declares no vars)',
    ]);
  });

  it('gives the checker the engine and reads Go template paths', () => {
    const checker = vi.fn(() => [
      { path: '.vars.app', line: 1, column: 4 },
      { path: '.vars.nope', line: 1, column: 20 },
      { path: '$x', line: 1, column: 30 },
    ]);
    const text = yaml(
      'version: "1"',
      'template: go',
      'vars: { app: web }',
      'tasks:',
      '  - name: a',
      '    when: "{{ .vars.app }} {{ .vars.nope }} {{ $x }}"',
      '    exec: { script: x }',
    );
    expect(check(text, { templateVariables: checker }).problems).toEqual([
      '6:31 tasks[0].when | tasks[0].when: "vars.nope" is not declared in vars (declared: app)',
    ]);
    expect(checker).toHaveBeenCalledWith('{{ .vars.app }} {{ .vars.nope }} {{ $x }}', 'go');
  });

  it('calls the checker only for strings holding a template', () => {
    const checker = vi.fn(fakeTemplateVariables);
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    when: "true"',
      '    delegate_to: [web-1, "{{ values.host }}"]',
      '    exec: { script: return true }',
    );
    check(text, { templateVariables: checker });
    expect(checker.mock.calls).toEqual([['{{ values.host }}', 'jinja']]);
  });

  it('reports a template error the checker throws with a line, and lets other throws through', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - name: a',
      '    exec:',
      '      script: |',
      '        ok()',
      '        {{ broken',
      '',
    );
    const positioned = () => {
      throw Object.assign(new Error('expected variable end'), { line: 2, column: 4 });
    };
    expect(check(text, { templateVariables: positioned }).problems).toEqual([
      '7:12 tasks[0].exec.script | tasks[0].exec.script: template error: expected variable end',
    ]);
    const crash = () => {
      throw new TypeError('checker bug');
    };
    expect(() => check(text, { templateVariables: crash })).toThrow('checker bug');
  });

  it('skips template checks without a checker', () => {
    const text = yaml('version: "1"', 'tasks:', '  - { name: a, exec: { script: "{{ nonsense }}" } }');
    expect(check(text).problems).toEqual([]);
  });
});

describe('script check', () => {
  const scripts = { checkScript: fakeCheckScript };
  const wf = (...lines: string[]) => yaml('version: "1"', 'tasks:', '  - name: build', ...lines);

  it.each([
    [['    exec:', '      script: |', '        local a = 1', '        @@ oops'], '7:9'],
    [['    exec:', '      script: |-', '', '        local a = 1', '          @@ oops'], '8:11'],
    [['    exec:', '      script: |2', '          indented', '        @@'], '7:9'],
    [['    exec:', '      script: >', '        local a =', '        1', '', '        @@ oops'], '9:9'],
    [['    exec: { script: "a()\\n@@" }'], '4:27'],
    // A plain scalar folds its lines into one, so Lua's line 1 is where the value starts.
    [['    exec:', '      script: a()', '        @@'], '5:15'],
  ])('maps the script line to the file for %j', (lines, position) => {
    expect(check(wf(...lines), scripts).problems).toEqual([
      `${position} tasks[0].exec.script | tasks[0].exec.script: the script of task "build" does not compile: unexpected symbol near '@'`,
    ]);
  });

  it('gives the checker the script with templates masked, and the task name', () => {
    const checker = vi.fn(() => undefined);
    const text = wf(
      '    exec:',
      '      script: |',
      '        local n = {{ vars.n }}',
      '        {% if x %}f(){% endif %}',
    );
    check(text, { checkScript: checker });
    expect(checker).toHaveBeenCalledWith(
      `local n = _${' '.repeat(11)}\n${' '.repeat(10)}f()${' '.repeat(11)}\n`,
      'build',
    );
  });

  it('keeps positions after masked templates', () => {
    const text = wf(
      '    exec:',
      '      script: |',
      '        local a = "{{ vars.x }}"',
      '        {% for h in hosts %}',
      '        @@',
      '        {% endfor %}',
    );
    expect(check(text, scripts).problems).toEqual([
      '8:9 tasks[0].exec.script | tasks[0].exec.script: the script of task "build" does not compile: unexpected symbol near \'@\'',
    ]);
  });

  it('checks every task, and reports alongside other problems', () => {
    const text = yaml(
      'version: "1"',
      'tasks:',
      '  - { name: a, exec: { script: "@@" }, timeout: x }',
      '  - { name: b, exec: { script: ok }, retry: 0 }',
      '  - { name: c, exec: { script: "ok\\n@@" } }',
    );
    expect(check(text, scripts).problems).toEqual([
      '3:33 tasks[0].exec.script | tasks[0].exec.script: the script of task "a" does not compile: unexpected symbol near \'@\'',
      '3:49 tasks[0].timeout | tasks[0].timeout: invalid duration "x": expected a number and a unit (ms, s, m, h, d), e.g. "90s" or "1.5h"',
      '4:45 tasks[1].retry | tasks[1].retry: expected an integer of at least 1, found the number 0',
      '5:37 tasks[2].exec.script | tasks[2].exec.script: the script of task "c" does not compile: unexpected symbol near \'@\'',
    ]);
  });

  it('records where each script line is, for run-time errors', () => {
    const text = wf('    exec:', '      script: >', '        a', '        b', '', '        c');
    expect(parseWorkflow(text, { file: FILE }).workflow.tasks[0].source.scriptLines).toEqual([6, 9]);
  });
});
