import { TemplateError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { createTemplateEngine } from '../engine.js';

const engine = createTemplateEngine();
const context = {
  vars: { app: 'web', hosts: ['web-1', 'web-2'], port: '8080', empty: '', nothing: null, conf: { b: 'two', a: 1 } },
  item: 'web-1',
  values: { port: 8081, ratio: 0.5, on: true },
  tasks: { build: { outputs: { artifact: 'web-1.0.tgz' } } },
};
const render = (source: string, ctx: Record<string, unknown> = context, name?: string) =>
  engine.render(source, ctx, { syntax: 'go', name });

function failure(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected a TemplateError');
}

describe('go fields and output', () => {
  it('reads context keys as fields', () => {
    expect(render('echo building {{ .vars.app }} for {{ .item }}')).toBe('echo building web for web-1');
    expect(render('{{ .tasks.build.outputs.artifact }}')).toBe('web-1.0.tgz');
    expect(render('{{ $.vars.app }}')).toBe('web');
  });

  it('prints values as Go does, except null', () => {
    expect(render('{{ .vars.hosts }}')).toBe('[web-1 web-2]');
    expect(render('{{ .vars.conf }}')).toBe('map[a:1 b:two]');
    expect(render('{{ .values.port }} {{ .values.ratio }} {{ .values.on }}')).toBe('8081 0.5 true');
    expect(render('[{{ .vars.nothing }}]')).toBe('[]');
    expect(render('{{ "lit" }} {{ 3 }} {{ -2 }} {{ 0x10 }} {{ 1e3 }} {{ true }} {{ `raw\\n` }} {{ "esc\\t" }}')).toBe(
      'lit 3 -2 16 1000 true raw\\n esc\t',
    );
  });

  it('does not escape HTML', () => {
    expect(render('{{ .cmd }}', { cmd: `a && b < "c" > 'd'` })).toBe(`a && b < "c" > 'd'`);
  });
});

describe('go control structures', () => {
  it('if / else if / else / end', () => {
    const source = '{{ if eq .vars.app "db" }}D{{ else if eq .vars.app "web" }}W{{ else }}O{{ end }}';
    expect(render(source)).toBe('W');
    expect(render(source, { vars: { app: 'x' } })).toBe('O');
    expect(render('{{ if .vars.empty }}y{{ else }}n{{ end }}{{ if .vars.hosts }}y{{ end }}')).toBe('ny');
  });

  it('with sets the dot, else runs with the outer dot', () => {
    expect(render('{{ with .vars.conf }}{{ .b }}{{ end }}')).toBe('two');
    expect(render('{{ with .vars.empty }}{{ . }}{{ else }}{{ .item }}{{ end }}')).toBe('web-1');
    expect(render('{{ with $x := .vars.app }}{{ $x }}{{ . }}{{ end }}')).toBe('webweb');
    expect(render('{{ with .vars.empty }}a{{ else with .item }}{{ . }}{{ end }}')).toBe('web-1');
  });

  it('range over lists, maps (sorted keys), integers, and empty values with else', () => {
    expect(render('{{ range .vars.hosts }}[{{ . }}]{{ end }}')).toBe('[web-1][web-2]');
    expect(render('{{ range $i, $h := .vars.hosts }}{{ $i }}={{ $h }} {{ end }}')).toBe('0=web-1 1=web-2 ');
    expect(render('{{ range $k, $v := .vars.conf }}{{ $k }}:{{ $v }} {{ end }}')).toBe('a:1 b:two ');
    expect(render('{{ range $h := .vars.hosts }}{{ $h }}{{ end }}')).toBe('web-1web-2');
    expect(render('{{ range 3 }}{{ . }}{{ end }}')).toBe('012');
    expect(render('{{ range .list }}x{{ else }}empty{{ end }}', { list: [] })).toBe('empty');
    expect(render('{{ range .vars.hosts }}{{ $.vars.app }}{{ end }}')).toBe('webweb');
  });

  it('break and continue', () => {
    const source =
      '{{ range .n }}{{ if eq . 1 }}{{ continue }}{{ end }}{{ if eq . 3 }}{{ break }}{{ end }}{{ . }}{{ end }}';
    expect(render(source, { n: [0, 1, 2, 3, 4] })).toBe('02');
  });

  it('variables: declare, assign, scope ends at end', () => {
    expect(render('{{ $x := "a" }}{{ if true }}{{ $x = "b" }}{{ end }}{{ $x }}')).toBe('b');
    expect(render('{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}')).toBe('21');
    expect(failure(() => engine.check('{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}', 'go')).reason).toBe(
      'undefined variable "$y"',
    );
  });

  it('trim markers remove the whitespace on their side', () => {
    expect(render('a  \n  {{- .item -}}  \n  b')).toBe('aweb-1b');
    expect(render('a {{- .item }} b')).toBe('aweb-1 b');
    expect(render('{{ range .vars.hosts }}\n  {{- . }}\n{{- end }}')).toBe('web-1web-2');
    // Without a space the dash is a sign.
    expect(render('{{-3}}')).toBe('-3');
  });

  it('comments are dropped, with or without trim markers', () => {
    expect(render('a{{/* a comment\nover lines */}}b')).toBe('ab');
    expect(render('a {{- /* c */ -}} b')).toBe('ab');
  });
});

describe('go functions', () => {
  const cases: [string, string][] = [
    [
      '{{ printf "%s:%d %5.2f|%-4s|%q %v %x %t %%" .vars.app 42 3.14159 "ab" "q" .vars.hosts 255 true }}',
      'web:42  3.14|ab  |"q" [web-1 web-2] ff true %',
    ],
    ['{{ printf "%d" "x" }} {{ printf "%s" }} {{ printf "a" 1 }}', '%!d(string=x) %!s(MISSING) a%!(EXTRA int=1)'],
    ['{{ len .vars.hosts }} {{ len .vars.app }} {{ len .vars.conf }}', '2 3 2'],
    ['{{ index .vars.hosts 1 }} {{ index .vars "app" }} {{ index . "vars" "conf" "b" }}', 'web-2 web two'],
    ['{{ eq .vars.app "web" }} {{ eq .vars.app "a" "b" "web" }} {{ ne .vars.app "web" }}', 'true true false'],
    ['{{ lt 1 2 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1 2 }}', 'true true true false'],
    ['{{ and 1 "x" }} {{ and 1 0 }} {{ or 0 "" }} {{ or 0 "y" }} {{ not .vars.empty }}', 'x 0  y true'],
    ['{{ .vars.missing | default "d" }} {{ default "d" .vars.app }} {{ .vars.empty | default "e" }}', 'd web e'],
    ['{{ .vars.app | upper }} {{ lower "ABC" }} {{ "  x " | trim }}', 'WEB abc x'],
    ['{{ join ", " .vars.hosts }} {{ .vars.hosts | join "+" }}', 'web-1, web-2 web-1+web-2'],
    ['{{ quote .vars.app "a\\"b" }} {{ squote .vars.app }} {{ shellquote "it\'s" }}', `"web" "a\\"b" 'web' 'it'"'"'s'`],
    [
      '{{ replace "." "/" "a.b.c" }} {{ contains "eb" .vars.app }} {{ hasPrefix "we" .vars.app }} {{ hasSuffix "x" .vars.app }}',
      'a/b/c true true false',
    ],
    [
      '{{ trimPrefix "web-" .item }} {{ trimSuffix "-1" .item }} {{ splitList "," "a,b" | join "|" }} {{ title "hello world" }}',
      '1 web a|b Hello World',
    ],
    ['{{ toJson .vars.conf }} {{ "web" | b64enc }} {{ b64dec "d2Vi" }}', '{"b":"two","a":1} d2Vi web'],
    [
      '{{ hasKey .vars "app" }} {{ hasKey .vars "zz" }} {{ empty .vars.empty }} {{ ternary "y" "n" true }}',
      'true false true y',
    ],
    ['{{ int "42" }} {{ float64 "1.5" }} {{ toString 5 }} {{ list 1 2 | len }} {{ (dict "k" "v").k }}', '42 1.5 5 2 v'],
    ['{{ slice .vars.hosts 1 }} {{ slice "abcdef" 1 3 }}', '[web-2] bc'],
    ['{{ print "a" 1 2 "b" }}|{{ println "x" 1 }}|', 'a1 2b|x 1\n|'],
    ['{{ html "<a&b>" }} {{ urlquery "a b&c" }} {{ js "it\'s" }}', "&lt;a&amp;b&gt; a+b%26c it\\'s"],
    ['{{ (index .vars.hosts 0) | upper }} {{ (len .vars.hosts) }}', 'WEB-1 2'],
  ];
  it.each(cases)('%s', (source, expected) => {
    expect(render(source)).toBe(expected);
  });

  it('and/or stop at the first deciding argument, so a guard protects a missing key', () => {
    expect(render('{{ if and (hasKey .vars "debug") .vars.debug }}d{{ else }}n{{ end }}')).toBe('n');
    expect(render('{{ or .item .vars.missing }}')).toBe('web-1');
  });

  it('refuses comparisons of different types, as Go does', () => {
    const error = failure(() => render('{{ eq .vars.port 8080 }}'));
    expect(error).toMatchObject({ kind: 'render', line: 1, column: 4 });
    expect(error.reason).toBe('eq: incompatible types for comparison: string and int');
  });

  it('reports a function failure with the function position', () => {
    expect(failure(() => render('\n  {{ index .vars.hosts 9 }}'))).toMatchObject({
      kind: 'render',
      reason: 'index: index out of range: 9',
      line: 2,
      column: 6,
    });
    expect(failure(() => render('{{ len 3 }}')).reason).toBe('len: len of int');
    expect(failure(() => render('{{ upper }}')).reason).toBe('upper: wrong number of args for upper: want 1 got 0');
  });
});

describe('go unknown variables', () => {
  it('names the path with its line and column', () => {
    const error = failure(() => render('echo start\ndeploy to {{ .vars.ap }}'));
    expect(error.message).toBe('unknown template variable "vars.ap" at line 2, column 14');
    expect(error).toMatchObject({ kind: 'unknown_variable', variable: 'vars.ap', line: 2, column: 14 });
  });

  it('fails for a missing root, nested key, key under $, index key, and inside conditions', () => {
    expect(failure(() => render('{{ .nope.x }}')).variable).toBe('nope');
    expect(failure(() => render('{{ .tasks.build.outputs.nope }}')).variable).toBe('tasks.build.outputs.nope');
    expect(failure(() => render('{{ range .vars.hosts }}{{ $.vars.zz }}{{ end }}')).variable).toBe('vars.zz');
    expect(failure(() => render('{{ index .vars "zz" }}')).variable).toBe('vars.zz');
    expect(failure(() => render('{{ if .vars.debug }}x{{ end }}')).variable).toBe('vars.debug');
    expect(failure(() => render('{{ .vars.nothing.x }}')).variable).toBe('vars.nothing.x');
    expect(failure(() => render('{{ $x := .vars }}{{ $x.zz }}')).variable).toBe('$x.zz');
  });

  it('reads a field of a non-mapping as an error, not as missing', () => {
    expect(failure(() => render('{{ .vars.app.x }}'))).toMatchObject({
      kind: 'render',
      reason: `can't evaluate field x in type string (at "vars.app.x")`,
    });
  });

  it('adds the template name', () => {
    expect(failure(() => render('{{ .vars.ap }}', context, 'wf.yaml')).message).toBe(
      'unknown template variable "vars.ap" at line 1, column 4 in wf.yaml',
    );
  });
});

describe('go syntax errors', () => {
  const cases: [string, string, number, number][] = [
    ['a\n{{ if .x }}b', 'unclosed {{ if }}: no matching {{ end }}', 2, 4],
    ['{{ range .x }}{{ else }}{{ else }}{{ end }}', '{{ else }} after {{ else }} in {{ range }}', 1, 28],
    ['x {{ end }}', 'unexpected {{ end }}', 1, 6],
    ['{{ vars.app }}', 'function "vars" not defined (a context variable is a field: ".vars")', 1, 4],
    ['{{ $nope }}', 'undefined variable "$nope"', 1, 4],
    [
      "{{ eq .a 'web' }}",
      `'web' is a Go character constant, which holds one character: use "double quotes" for strings`,
      1,
      10,
    ],
    ['{{ .a', 'unclosed action: missing "}}"', 1, 1],
    ['{{ }}', 'missing value for command', 1, 4],
    ['{{ .a .b }}', 'cannot give arguments to .a: it is not a function', 1, 7],
    ['{{ .a | .b }}', 'cannot pipe into .b: only a function takes the piped value', 1, 9],
    ['{{ break }}', '{{ break }} outside {{ range }}', 1, 4],
    [
      '{{ define "x" }}{{ end }}',
      '{{ define }} is not supported: a template must be self-contained (no define, template or block)',
      1,
      4,
    ],
    ['{{ (len .a }}', 'unclosed left paren', 1, 12],
    ['{{ 12ab }}', 'bad number syntax: "12ab"', 1, 4],
    ['{{ "abc }}', 'unterminated quoted string', 1, 4],
    ['{{ .a & }}', 'unexpected "&" in action', 1, 7],
    ['{{/* open', 'unclosed comment', 1, 3],
    ['{{ nil }}', 'nil is not a command', 1, 4],
    ['{{ len(.a) }}', 'missing space before "("', 1, 7],
  ];
  it.each(cases)('%s', (source, reason, line, column) => {
    const error = failure(() => engine.check(source, 'go'));
    expect(error).toMatchObject({ kind: 'syntax', reason, line, column });
  });
});
