import { InvalidInputError } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { applyOverrides, mergeValues, parseVarArguments } from './overrides.js';
import { parseWorkflow } from './parse.js';

const { workflow } = parseWorkflow(
  [
    'version: "1.0"',
    'vars: { app: web, port: 8080, empty: "" }',
    'tasks:',
    '  - { name: a, exec: { script: return true } }',
    'values:',
    '  web-1: { port: 8081, tls: { enabled: false, cert: a.pem }, hosts: [a, b] }',
    '  web-2: { port: 8082 }',
  ].join('\n'),
  { file: 'wf.yaml' },
);

describe('parseVarArguments', () => {
  it('splits at the first = and keeps the rest of the value', () => {
    expect(parseVarArguments(['app=api', 'url=http://x/?a=1&b=2', 'empty=', 'app=last'])).toEqual({
      app: 'last',
      url: 'http://x/?a=1&b=2',
      empty: '',
    });
  });

  it('names every bad argument', () => {
    expect(() => parseVarArguments(['app', '=x', 'my-var=1', '9lives=1', 'ok=1'])).toThrow(
      new InvalidInputError(
        [
          '--var "app": expected key=value',
          '--var "=x": expected key=value',
          '--var "my-var=1": "my-var" is not a valid variable name (letters, digits and _, not starting with a digit)',
          '--var "9lives=1": "9lives" is not a valid variable name (letters, digits and _, not starting with a digit)',
        ].join('\n'),
        { field: 'vars' },
      ),
    );
  });

  it('keeps __proto__ as a plain key, in a map without a prototype', () => {
    const vars = parseVarArguments(['__proto__=x']);
    expect(Object.getPrototypeOf(vars)).toBeNull();
    expect(Object.keys(vars)).toEqual(['__proto__']);
  });
});

describe('applyOverrides', () => {
  it('sets declared vars from --var arguments and leaves the input unchanged', () => {
    const result = applyOverrides(workflow, { vars: ['app=api', 'port=9090'] });
    expect(result.vars).toEqual({ app: 'api', port: '9090', empty: '' });
    expect(workflow.vars).toEqual({ app: 'web', port: '8080', empty: '' });
    expect(result.tasks).toBe(workflow.tasks);
  });

  it('takes a ready map as well', () => {
    expect(applyOverrides(workflow, { vars: { empty: 'set' } }).vars.empty).toBe('set');
  });

  it('refuses vars the workflow does not declare, suggesting a near one', () => {
    expect(() => applyOverrides(workflow, { vars: ['ap=api', 'zzz=1'] })).toThrow(
      new InvalidInputError(
        [
          '--var "ap=api": the workflow has no variable "ap" (did you mean "app"?); declared: app, port, empty',
          '--var "zzz=1": the workflow has no variable "zzz"; declared: app, port, empty',
        ].join('\n'),
        { field: 'vars' },
      ),
    );
    expect(() => applyOverrides({ ...workflow, vars: {} }, { vars: ['a=1'] })).toThrow(
      new InvalidInputError('--var "a=1": the workflow has no variable "a"; it declares no vars', { field: 'vars' }),
    );
  });

  it('reports syntax errors and unknown names of a map', () => {
    expect(() => applyOverrides(workflow, { vars: ['bad'] })).toThrow(
      new InvalidInputError('--var "bad": expected key=value', { field: 'vars' }),
    );
    expect(() => applyOverrides(workflow, { vars: { 'a-b': '1' } })).toThrow(
      '--var "a-b=1": "a-b" is not a valid variable name',
    );
  });

  it("names a var given as a field (a hook's flows.run, a schedule's vars) as vars.<name>", () => {
    expect(() => applyOverrides(workflow, { vars: { ap: 'api', 'a-b': '1' }, varsFrom: 'fields' })).toThrow(
      new InvalidInputError(
        [
          'vars.a-b: "a-b" is not a valid variable name (letters, digits and _, not starting with a digit)',
          'vars.ap: the workflow has no variable "ap" (did you mean "app"?); declared: app, port, empty',
        ].join('\n'),
        { field: 'vars' },
      ),
    );
  });

  it('deep-merges --values over the file per agent', () => {
    const result = applyOverrides(workflow, {
      values: { 'web-1': { tls: { enabled: true }, hosts: ['c'] }, 'db-1': { port: 5432 } },
    });
    expect(result.values).toEqual({
      'web-1': { port: 8081, tls: { enabled: true, cert: 'a.pem' }, hosts: ['c'] },
      'web-2': { port: 8082 },
      'db-1': { port: 5432 },
    });
    expect(workflow.values['web-1']).toEqual({ port: 8081, tls: { enabled: false, cert: 'a.pem' }, hosts: ['a', 'b'] });
  });
});

describe('mergeValues', () => {
  it('replaces a mapping by a scalar and a scalar by a mapping', () => {
    expect(mergeValues({ a: { x: { y: 1 }, z: 1 } }, { a: { x: 2, z: { w: 1 } } })).toEqual({
      a: { x: 2, z: { w: 1 } },
    });
  });

  it('refuses an agent entry that is not a mapping', () => {
    expect(() => mergeValues({}, { a: 5 as never })).toThrow(
      new InvalidInputError('--values: agent "a": expected a mapping of values', { field: 'values' }),
    );
  });

  it('does not let __proto__ reach the prototype', () => {
    const merged = mergeValues({}, JSON.parse('{"a": {"__proto__": {"polluted": true}}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(merged.a)).toEqual(['__proto__']);
  });
});
