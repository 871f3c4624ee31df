import { hasTemplateMarkup, isTemplateTruthy, TemplateError, type TemplateSyntax } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { createTemplateEngine } from './engine.js';

const engine = createTemplateEngine();
const context = { vars: { app: 'web', hosts: ['a', 'b'] }, agent: { cpu_usage: 42 } };

function failure(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected a TemplateError');
}

describe('truthiness', () => {
  it.each(['false', 'False', 'FALSE', '0', '', '  ', 'none', 'None', 'nil', 'null', 'no', 'off', ' false\n'])(
    '%j is false',
    (text) => expect(isTemplateTruthy(text)).toBe(false),
  );
  it.each(['true', 'True', '1', 'yes', 'web', '0.0', '-1', 'falsey'])('%j is true', (text) =>
    expect(isTemplateTruthy(text)).toBe(true),
  );
});

describe('evaluate', () => {
  const cases: [string, TemplateSyntax, boolean][] = [
    ["{{ vars.app == 'web' }}", 'jinja', true],
    ["{{ vars.app == 'db' }}", 'jinja', false],
    ['{{ agent.cpu_usage < 80 }}', 'jinja', true],
    ['{{ vars.hosts | length }}', 'jinja', true],
    ['{{ vars.hosts | length - 2 }}', 'jinja', false],
    ['{{ none }}', 'jinja', false],
    ['{% if vars.app %}yes{% endif %}', 'jinja', true],
    // A bare expression, as Ansible's `when:` is written.
    ["vars.app == 'web'", 'jinja', true],
    ['vars.app is defined and vars.missing is not defined', 'jinja', true],
    ['{{ eq .vars.app "web" }}', 'go', true],
    ['{{ lt .agent.cpu_usage 40 }}', 'go', false],
    ['{{ .vars.app }}', 'go', true],
    ['eq .vars.app "db"', 'go', false],
    // Literal answers need no context.
    ['yes', 'go', true],
    ['False', 'jinja', false],
    ['', 'jinja', false],
  ];
  it.each(cases)('%s (%s) is %s', (expression, syntax, expected) => {
    expect(engine.evaluate(expression, context, syntax)).toBe(expected);
  });

  it('fails on an unknown variable instead of treating it as false', () => {
    const error = failure(() => engine.evaluate("{{ vars.ap == 'web' }}", context, 'jinja'));
    expect(error.message).toBe('unknown template variable "vars.ap" at line 1, column 4');
  });

  it('reports positions in a bare expression as written', () => {
    expect(failure(() => engine.evaluate("vars.ap == 'web'", context, 'jinja'))).toMatchObject({ line: 1, column: 1 });
    expect(failure(() => engine.evaluate('  eq .vars.ap "x"', context, 'go'))).toMatchObject({ line: 1, column: 6 });
  });
});

describe('variables', () => {
  it('lists jinja context paths with positions, leaving out names the template binds', () => {
    const source = [
      'echo {{ vars.app }} {{ tasks.build.outputs["artifact"] }}',
      '{% for h in vars.hosts %}{{ h.name }} {{ loop.index }} {{ item }}{% endfor %}',
      '{% set local = 1 %}{{ local }}{% macro m(a) %}{{ a }}{{ caller }}{% endmacro %}',
      '{{ vars.port | default("80") }}{% if vars.debug is defined %}{% endif %}',
      '{{ vars.hosts[0] }} {{ vars[key] }} {{ vars.app.split(",") }} {{ range(3) }} {{ {"k": v} }}',
    ].join('\n');
    const found = engine.variables(source, 'jinja').map((v) => [v.path, v.line, v.column, v.optional]);
    expect(found).toEqual([
      ['vars.app', 1, 9, false],
      ['tasks.build.outputs.artifact', 1, 24, false],
      ['vars.hosts', 2, 13, false],
      ['item', 2, 59, false],
      ['vars.port', 4, 4, true],
      ['vars.debug', 4, 38, true],
      ['vars.hosts[0]', 5, 4, false],
      ['vars', 5, 24, false],
      ['key', 5, 29, false],
      ['vars.app', 5, 40, false],
      ['v', 5, 87, false],
    ]);
    expect(engine.variables('{{ vars.hosts[0] }}', 'jinja')[0].segments).toEqual(['vars', 'hosts', 0]);
  });

  it('lists go context paths: root fields, $ paths anywhere, constant index keys', () => {
    const source = [
      '{{ .vars.app }} {{ index .tasks "build" "outputs" }}',
      '{{ range .vars.hosts }}{{ .name }}{{ $.item }}{{ end }}',
      '{{ with .vars.conf }}{{ .x }}{{ else }}{{ .fallback }}{{ end }}',
      '{{ .vars.port | default "80" }} {{ default "x" .vars.y }} {{ $v := .z }}{{ $v.w }}',
    ].join('\n');
    const found = engine.variables(source, 'go').map((v) => [v.path, v.line, v.column, v.optional]);
    expect(found).toEqual([
      ['vars.app', 1, 4, false],
      ['tasks.build.outputs', 1, 26, false],
      ['vars.hosts', 2, 10, false],
      ['item', 2, 38, false],
      ['vars.conf', 3, 9, false],
      ['fallback', 3, 43, false],
      ['vars.port', 4, 4, true],
      ['vars.y', 4, 48, true],
      ['z', 4, 68, false],
    ]);
  });

  it('returns nothing for plain text and throws on a syntax error', () => {
    expect(engine.variables('no markup here', 'jinja')).toEqual([]);
    expect(failure(() => engine.variables('{{ .a', 'go')).kind).toBe('syntax');
    expect(failure(() => engine.variables('{{ a( }}', 'jinja')).kind).toBe('syntax');
  });
});

describe('check, plain text and caching', () => {
  it('accepts valid templates in both syntaxes and names the template in errors', () => {
    expect(() => engine.check('{% for x in y %}{{ x }}{% endfor %}', 'jinja')).not.toThrow();
    expect(() => engine.check('{{ range .y }}{{ . }}{{ end }}', 'go')).not.toThrow();
    expect(failure(() => engine.check('{{ if }}', 'go', 'wf.yaml')).message).toMatch(/ in wf\.yaml$/);
  });

  it('renders text without markup as it is, Lua braces included', () => {
    const lua = 'local t = { a = 1 }\nreturn true, "ok", { x = "${not a template}" }\n';
    expect(engine.render(lua, {}, { syntax: 'jinja' })).toBe(lua);
    expect(engine.render(lua, {}, { syntax: 'go' })).toBe(lua);
    expect(hasTemplateMarkup(lua, 'jinja')).toBe(false);
    expect(hasTemplateMarkup('{% raw %}', 'jinja')).toBe(true);
    expect(hasTemplateMarkup('{% raw %}', 'go')).toBe(false);
  });

  it('rejects an unknown syntax', () => {
    expect(() => engine.render('{{ x }}', {}, { syntax: 'mustache' as TemplateSyntax })).toThrow(
      /unknown template syntax "mustache"/,
    );
  });

  it('compiles a source once and drops the least recently used beyond its size', () => {
    const small = createTemplateEngine({ cacheSize: 2 });
    small.render('{{ a }}', { a: 1 }, { syntax: 'jinja' });
    small.render('{{ a }}', { a: 2 }, { syntax: 'jinja' });
    expect(small.cacheSize()).toBe(1);
    small.render('{{ .a }}', { a: 1 }, { syntax: 'go' });
    small.render('{{ a }}', { a: 1 }, { syntax: 'jinja' });
    small.render('{{ b }}', { b: 1 }, { syntax: 'jinja' });
    expect(small.cacheSize()).toBe(2);
    // A failed compile is not cached.
    expect(() => small.render('{{ a( }}', {}, { syntax: 'jinja' })).toThrow(TemplateError);
    expect(small.cacheSize()).toBe(2);
  });
});
