import { describe, expect, it } from 'vitest';
import { conditionHolds, hasTemplateTag, maskTemplates, splitVariablePath } from './template-syntax.js';

describe('hasTemplateTag', () => {
  it('knows each engine’s tags', () => {
    expect(hasTemplateTag('{{ x }}', 'jinja')).toBe(true);
    expect(hasTemplateTag('{% if x %}', 'jinja')).toBe(true);
    expect(hasTemplateTag('{# note #}', 'jinja')).toBe(true);
    expect(hasTemplateTag('{% if x %}', 'go')).toBe(false);
    expect(hasTemplateTag('{{ .x }}', 'go')).toBe(true);
    expect(hasTemplateTag('plain', 'jinja')).toBe(false);
  });
});

describe('maskTemplates', () => {
  it('turns an expression into _ and keeps every offset', () => {
    const script = 'local n = {{ vars.n }}\nprint("{{ vars.app }}")';
    const masked = maskTemplates(script, 'jinja');
    expect(masked).toBe(`local n = _${' '.repeat(11)}\nprint("_${' '.repeat(13)}")`);
    expect(masked.length).toBe(script.length);
  });

  it('blanks statements and comments, keeping their newlines', () => {
    expect(maskTemplates('{% if x %}\na()\n{% endif %}{# a\nb #}', 'jinja')).toBe(
      `${' '.repeat(10)}\na()\n${' '.repeat(11 + 4)}\n${' '.repeat(4)}`,
    );
  });

  it('leaves Jinja statement syntax alone for Go templates', () => {
    expect(maskTemplates('{% x %} {{ .y }}', 'go')).toBe(`{% x %} _${' '.repeat(7)}`);
  });

  it('leaves an unclosed tag as written', () => {
    expect(maskTemplates('a {{ b', 'jinja')).toBe('a {{ b');
  });
});

describe('splitVariablePath', () => {
  it.each([
    ['vars.app', ['vars', 'app']],
    ['.vars.app', ['vars', 'app']],
    ['item', ['item']],
    ['tasks["per-host"].outputs.x', ['tasks', 'per-host', 'outputs', 'x']],
    ["tasks['per-host'].outputs", ['tasks', 'per-host', 'outputs']],
    ['values.hosts[0]', ['values', 'hosts', '0']],
    ['tasks["a\\"b"]', ['tasks', 'a"b']],
  ])('splits %j', (path, segments) => {
    expect(splitVariablePath(path)).toEqual(segments);
  });

  it.each(['$x', '$x.y', '.', ''])('skips %j', (path) => {
    expect(splitVariablePath(path)).toBeUndefined();
  });
});

describe('conditionHolds', () => {
  it.each(['', '  ', 'false', 'False', ' FALSE\n', 'no', 'off', '0', 'none', 'None', 'null', 'nil'])(
    'is false for %j',
    (text) => {
      expect(conditionHolds(text)).toBe(false);
    },
  );

  it.each(['true', 'True', 'yes', '1', 'web', '0.0', 'falsey'])('is true for %j', (text) => {
    expect(conditionHolds(text)).toBe(true);
  });
});
