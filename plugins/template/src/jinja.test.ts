import { TemplateError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { createTemplateEngine } from './engine.js';

const engine = createTemplateEngine();
const context = {
  vars: { app: 'web', hosts: ['web-1', 'web-2'], port: '8080', empty: '', nothing: null, conf: { a: 1, b: 'two' } },
  item: 'web-1',
  tasks: { build: { outputs: { artifact: 'web-1.0.tgz' } } },
};
const render = (source: string, ctx: Record<string, unknown> = context, name?: string) =>
  engine.render(source, ctx, { syntax: 'jinja', name });

function failure(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected a TemplateError');
}

describe('jinja rendering', () => {
  it('renders variables, conditions and loops', () => {
    expect(render('echo building {{ vars.app }} for {{ item }}')).toBe('echo building web for web-1');
    expect(render("{% if vars.app == 'web' %}yes{% else %}no{% endif %}")).toBe('yes');
    expect(render('{% for h in vars.hosts %}{{ loop.index }}:{{ h }} {% endfor %}')).toBe('1:web-1 2:web-2 ');
    expect(render('{{ tasks.build.outputs.artifact }}')).toBe('web-1.0.tgz');
    expect(render("{{ vars['app'] }} {{ vars.hosts[1] }} {{ vars.hosts[-1] }}")).toBe('web web-2 web-2');
  });

  it('drops the line break after a block tag, as Ansible does (trim_blocks)', () => {
    const script = '{% for h in vars.hosts %}\nexec.run("ping {{ h }}")\n{% endfor %}\nreturn true\n';
    expect(render(script)).toBe('exec.run("ping web-1")\nexec.run("ping web-2")\nreturn true\n');
  });

  it('does not escape HTML: output is shell and Lua', () => {
    const ctx = { cmd: `grep "a&b" <in >out && echo 'ok'` };
    expect(render('{{ cmd }}', ctx)).toBe(ctx.cmd);
    expect(render(`{{ "<b>" ~ '&' }}`)).toBe('<b>&');
  });

  it('prints lists and mappings as JSON, null as nothing', () => {
    expect(render('{{ vars.hosts }}')).toBe('["web-1","web-2"]');
    expect(render('{{ vars.conf }}')).toBe('{"a":1,"b":"two"}');
    expect(render('[{{ vars.nothing }}]')).toBe('[]');
    expect(render('{{ 1.5 + 1 }} {{ true }}')).toBe('2.5 true');
  });

  it('keeps set, macros and loop variables working under strict lookups', () => {
    expect(render('{% set greeting = "hi" %}{{ greeting }}')).toBe('hi');
    expect(render('{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(3, b=4) }}')).toBe('1-2 3-4');
    expect(render('{% for k, v in vars.conf %}{{ k }}={{ v }};{% endfor %}')).toBe('a=1;b=two;');
    expect(render('{% for x in [] %}x{% else %}none{% endfor %}')).toBe('none');
  });

  it('offers the Python methods Ansible templates call', () => {
    expect(render('{{ vars.app.upper() }} {{ "a,b".split(",") | join("+") }} {{ " x ".strip() }}')).toBe('WEB a+b x');
    expect(render('{{ "a-b-c".replace("-", "_") }}')).toBe('a_b_c');
    expect(render('{% for k, v in vars.conf.items() %}{{ k }}{{ v }}{% endfor %} {{ vars.conf.keys() | join }}')).toBe(
      'a1btwo ab',
    );
    expect(render('{{ vars.conf.get("zz", "dflt") }} {{ ",".join(vars.hosts) }}')).toBe('dflt web-1,web-2');
  });
  it('supports raw blocks, comments, whitespace control, call blocks, filter blocks and block set', () => {
    expect(render('{% raw %}local t = {{1,2}}{% endraw %} {{ vars.app }}')).toBe('local t = {{1,2}} web');
    expect(render('a {# note #}b')).toBe('a b');
    expect(render('x\n  {%- if true -%}\n  y\n  {%- endif %}\nz')).toBe('xyz');
    expect(render('{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}{{ vars.app }}{% endcall %}')).toBe(
      '<web>',
    );
    expect(render('{% filter upper %}hi {{ vars.app }}{% endfilter %}')).toBe('HI WEB');
    expect(render('{% set block %}b {{ vars.app }}{% endset %}{{ block }}')).toBe('b web');
    expect(render("{{ vars.x if vars.x is defined else 'fallback' }}")).toBe('fallback');
  });

  it('reports a Lua table constructor that looks like a tag, so the author can wrap it in raw', () => {
    const error = failure(() => render('local t = {{1, 2}}'));
    expect(error).toMatchObject({ kind: 'syntax', line: 1 });
  });
});

describe('jinja unknown variables', () => {
  it('names the path with its line and column, never renders an empty string', () => {
    const error = failure(() => render('echo start\ndeploy to {{ vars.ap }}'));
    expect(error.message).toBe('unknown template variable "vars.ap" at line 2, column 14');
    expect(error).toMatchObject({ kind: 'unknown_variable', code: 'unknown_template_variable', line: 2, column: 14 });
    expect(error.variable).toBe('vars.ap');
    expect(error.reason).toBe('unknown template variable "vars.ap"');
    expect(error.status).toBe(400);
  });

  it('fails for a missing root, a missing key of a known mapping, and a missing index', () => {
    expect(failure(() => render('{{ nope }}')).variable).toBe('nope');
    expect(failure(() => render('{{ vars.missing }}')).variable).toBe('vars.missing');
    expect(failure(() => render('{{ tasks.build.outputs.nope }}')).variable).toBe('tasks.build.outputs.nope');
    expect(failure(() => render('{{ vars.hosts[5] }}')).variable).toBe('vars.hosts[5]');
    expect(failure(() => render('{{ vars.nothing.x }}')).variable).toBe('vars.nothing.x');
    expect(failure(() => render('{{ vars["no key"] }}')).variable).toBe('vars["no key"]');
    // Inherited members are not keys, and nothing reaches the Function constructor.
    expect(failure(() => render('{{ vars.constructor }}')).variable).toBe('vars.constructor');
    expect(failure(() => render('{{ "".constructor.constructor("return 1")() }}')).variable).toBe(
      '(expression).constructor',
    );
    expect(failure(() => render('{{ vars.hosts.__proto__ }}')).variable).toBe('vars.hosts.__proto__');
    expect(render('{{ data.constructor }}', { data: { constructor: 'own key' } })).toBe('own key');
  });

  it('fails wherever the variable is read, not only in output', () => {
    expect(failure(() => render('{% if vars.debug %}x{% endif %}')).variable).toBe('vars.debug');
    expect(failure(() => render('{% for x in vars.list %}{% endfor %}')).variable).toBe('vars.list');
    expect(failure(() => render('{{ vars.hosts | join(vars.sep) }}')).variable).toBe('vars.sep');
    expect(failure(() => render('{{ undefined_fn() }}')).variable).toBe('undefined_fn');
    const inLoop = failure(() => render('{% for h in vars.hosts %}\n  {{ h.name }}\n{% endfor %}'));
    expect(inLoop.message).toBe('unknown template variable "h.name" at line 2, column 6');
  });

  it('lets default and the defined tests ask for a missing value', () => {
    expect(render('{{ vars.missing | default("x") }} {{ nope.a.b | d("y") }}')).toBe('x y');
    expect(render('{{ vars.app | default("x") }}')).toBe('web');
    expect(render('{% if vars.debug is defined %}d{% else %}n{% endif %}')).toBe('n');
    expect(render('{% if vars.debug is undefined and vars.app is defined %}ok{% endif %}')).toBe('ok');
    expect(render('{{ vars.missing | default(vars.app) | upper }}')).toBe('WEB');
    // The fallback itself is read strictly.
    expect(failure(() => render('{{ vars.missing | default(vars.other) }}')).variable).toBe('vars.other');
  });

  it('adds the template name to the message', () => {
    const error = failure(() => render('{{ vars.ap }}', context, 'deploy.yaml tasks[0].exec.script'));
    expect(error.message).toBe(
      'unknown template variable "vars.ap" at line 1, column 4 in deploy.yaml tasks[0].exec.script',
    );
    expect(error.templateName).toBe('deploy.yaml tasks[0].exec.script');
    expect(error.details).toMatchObject({ template: 'deploy.yaml tasks[0].exec.script', line: 1, column: 4 });
  });
});

describe('jinja syntax errors', () => {
  it('reports the position of a malformed expression', () => {
    const error = failure(() => engine.check('a\n  {{ foo( }}', 'jinja'));
    expect(error).toMatchObject({ kind: 'syntax', code: 'template_syntax_error', line: 2, column: 11 });
    expect(error.reason).toContain('unexpected token');
  });

  it('reports an unclosed block at the end of the template', () => {
    const error = failure(() => engine.check('{% if x %}\nbody', 'jinja'));
    expect(error.kind).toBe('syntax');
    expect(error.reason).toMatch(/endif/);
    expect([error.line, error.column]).toEqual([2, 5]);
  });

  it('rejects unknown filters and tests at compile time, with their position', () => {
    expect(failure(() => engine.check('x\n{{ vars.app | nosuch }}', 'jinja'))).toMatchObject({
      reason: 'unknown filter "nosuch"',
      line: 2,
      column: 15,
    });
    expect(failure(() => engine.check('{{ 1 is nosuch }}', 'jinja'))).toMatchObject({
      reason: 'unknown test "nosuch"',
      line: 1,
      column: 9,
    });
  });

  it('rejects include, extends and import: templates are self-contained', () => {
    expect(failure(() => engine.check('{% include "other.j2" %}', 'jinja')).reason).toMatch(
      /include %\} is not supported/,
    );
    expect(failure(() => engine.check('{% extends "base.j2" %}', 'jinja')).reason).toMatch(/extends/);
    expect(failure(() => engine.check('{% import "m.j2" as m %}', 'jinja')).reason).toMatch(/import/);
  });

  it('reports a failing filter as a render error at the filter', () => {
    const error = failure(() => render('ok\n{{ "not json" | from_json }}'));
    expect(error).toMatchObject({ kind: 'render', code: 'template_render_error', line: 2 });
    expect(error.reason).toMatch(/JSON/);
  });
});

describe('jinja filters', () => {
  const cases: [string, string][] = [
    ['{{ vars.missing | default("d") }}', 'd'],
    ['{{ vars.empty | default("d", true) }}', 'd'],
    ['{{ "MiXed" | lower }} {{ "MiXed" | upper }}', 'mixed MIXED'],
    ['{{ vars.hosts | join(", ") }}', 'web-1, web-2'],
    ['{{ vars.hosts | length }} {{ "abc" | length }} {{ vars.conf | length }}', '2 3 2'],
    ['[{{ "  x  " | trim }}]', '[x]'],
    ['{{ "a.b.c" | replace(".", "/") }}', 'a/b/c'],
    ['{{ vars.conf | to_json }} {{ vars.hosts | tojson }}', '{"a":1,"b":"two"} ["web-1","web-2"]'],
    ['{{ {"k": [1]} | to_nice_json(indent=2) }}', '{\n  "k": [\n    1\n  ]\n}'],
    ['{{ \'{"a": 5}\' | from_json | to_json }}', '{"a":5}'],
    [
      '{{ "42" | int + 1 }} {{ "3.9" | int }} {{ "x" | int }} {{ "x" | int(7) }} {{ "ff" | int(base=16) }}',
      '43 3 0 7 255',
    ],
    ['{{ "1.5" | float * 2 }} {{ "abc" | float }}', '3 0'],
    [
      '{{ "yes" | bool }} {{ "On" | bool }} {{ "1" | bool }} {{ "no" | bool }} {{ "false" | bool }} {{ 1 | bool }}',
      'true true true false false true',
    ],
    ['{{ "web:1" | b64encode }} {{ "d2ViOjE=" | b64decode }}', 'd2ViOjE= web:1'],
    ['{{ "it\'s here" | quote }} {{ "plain-word" | quote }} {{ "" | quote }}', `'it'"'"'s here' plain-word ''`],
    ['{{ "/etc/nginx/nginx.conf" | basename }} {{ "/etc/nginx/nginx.conf" | dirname }}', 'nginx.conf /etc/nginx'],
    ['{{ "web-01" | regex_replace("(\\\\w+)-(\\\\d+)", "\\\\2-\\\\1") }}', '01-web'],
    ['{{ "Web" | regex_replace("web", "db", ignorecase=true) }}', 'db'],
    ['{{ "ver 1.2.3" | regex_search("[0-9.]+") }}', '1.2.3'],
    ['{{ "a b  c" | split | join("|") }} {{ "a,b,c" | split(",", 1) | join("|") }}', 'a|b|c a|b,c'],
    ['{% for i in vars.conf | dict2items %}{{ i.key }}={{ i.value }} {% endfor %}', 'a=1 b=two '],
    ['{{ [{"key": "x", "value": 1}] | items2dict | to_json }}', '{"x":1}'],
    ['{{ (vars.app == "web") | ternary("yes", "no") }}', 'yes'],
    ['{{ [3, 1, 2] | min }} {{ [3, 1, 2] | max }} {{ [1, 1, 2] | unique | join }}', '1 3 12'],
    ['{% if vars.nothing is none %}none{% endif %} {{ "abc" is match("a.c") }}', 'none true'],
    [
      '{{ vars.hosts | map("upper") | join }} {{ [{"n": "a"}, {"n": "b"}] | map(attribute="n") | join }}',
      'WEB-1WEB-2 ab',
    ],
    [
      '{{ "%s:%05d %.1f" | format("a", 42, 2.26) }} {{ "%(x)s-%(y)r" | format({"x": 1, "y": "q"}) }}',
      'a:00042 2.3 1-"q"',
    ],
  ];
  it.each(cases)('%s', (source, expected) => {
    expect(render(source)).toBe(expected);
  });

  it('refuses b64decode of text that is not base64', () => {
    expect(failure(() => render('{{ "@@@" | b64decode }}')).reason).toMatch(/not base64/);
  });
});

describe('jinja range bounds (what one rendering may iterate)', () => {
  it('renders ranges as nunjucks does (Python range), within the budget', () => {
    expect(render('{{ range(3) | join(",") }}|{{ range(2, 5) | join(",") }}|{{ range(10, 0, -3) | join(",") }}')).toBe(
      '0,1,2|2,3,4|10,7,4,1',
    );
    // The budget is per rendering: the next one starts afresh.
    for (let i = 0; i < 3; i++) expect(render('{{ range(0, 90000) | length }}')).toBe('90000');
  });

  it('refuses range(0, 100000000) before making it, naming the limit', () => {
    const error = failure(() => render('{% for i in range(0, 100000000) %}{% endfor %}'));
    expect(error.message).toContain('range(0, 100000000) would make 100000000 items');
    expect(error.message).toContain('at most 100000 range items in one rendering');
  });

  it('stops the nested range(0, 10000) bomb of a when: condition once the loops made 100,000 items', () => {
    const error = failure(() =>
      engine.evaluate(
        '{% for i in range(0, 10000) %}{% for j in range(0, 10000) %}{% endfor %}{% endfor %}true',
        context,
        'jinja',
      ),
    );
    expect(error.message).toContain('range(0, 10000) would make 10000 items');
  });
});

describe('go range bounds', () => {
  const go = (source: string) => engine.render(source, context, { syntax: 'go' });
  it('ranges within the budget, afresh for each rendering', () => {
    for (let i = 0; i < 3; i++) expect(go('{{ range $i := 90000 }}{{ end }}done')).toBe('done');
  });
  it('refuses range 100000000 and nested ranges past the budget', () => {
    expect(failure(() => go('{{ range 100000000 }}{{ end }}')).message).toContain(
      'range over 100000000 entries: a template may take at most 100000 range turns in one rendering',
    );
    expect(failure(() => go('{{ range 10000 }}{{ range 10000 }}{{ end }}{{ end }}')).message).toContain(
      'range over 10000 entries',
    );
  });
});
