import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { coerceToSchema, resolveConfig, type ConfigEntry } from './config-resolve.js';
import type { ConfigDeclaration } from './config.js';

const entries = (values: Record<string, unknown>, source = 'env RUNNER_X') =>
  new Map<string, ConfigEntry>(Object.entries(values).map(([k, value]) => [k, { value, source }]));

const declared: ConfigDeclaration = {
  'http.port': { schema: { type: 'integer', minimum: 0, maximum: 65535 }, default: 8080, help: 'port' },
  'http.cors_origins': { schema: { type: 'array', items: { type: 'string' } }, default: ['*'], help: 'origins' },
  'agent.labels': { schema: { type: 'object', additionalProperties: { type: 'string' } }, default: {}, help: 'l' },
  'agent.master_tls': { schema: { type: 'boolean' }, default: false, help: 'tls' },
  'agent.restart_mode': { schema: { type: 'string', enum: ['auto', 'exec'] }, default: 'auto', help: 'mode' },
  'auth.secret': { schema: { type: 'string' }, help: 'secret', secret: true },
};
const resolve = (values: Record<string, unknown>, config: ConfigDeclaration = declared) =>
  resolveConfig({ dataDir: '/d', entries: entries(values), declarers: [{ pluginId: 'p', config }] });

describe('coerceToSchema', () => {
  it('turns env and flag strings into the declared type', () => {
    expect(coerceToSchema('k', ' 42 ', { type: 'integer' }, 's')).toBe(42);
    expect(coerceToSchema('k', '0.5', { type: 'number' }, 's')).toBe(0.5);
    for (const yes of ['true', 'YES', '1', 'on']) expect(coerceToSchema('k', yes, { type: 'boolean' }, 's')).toBe(true);
    for (const no of ['false', 'no', '0', 'Off']) expect(coerceToSchema('k', no, { type: 'boolean' }, 's')).toBe(false);
    expect(coerceToSchema('k', 'a, b,,c', { type: 'array', items: { type: 'string' } }, 's')).toEqual(['a', 'b', 'c']);
    expect(coerceToSchema('k', '1,2', { type: 'array', items: { type: 'integer' } }, 's')).toEqual([1, 2]);
    expect(coerceToSchema('k', 'zone=a, tier = web', { type: 'object' }, 's')).toEqual({ zone: 'a', tier: 'web' });
    expect(coerceToSchema('k', 7, { type: 'string' }, 's')).toBe('7');
  });

  it('names key, source, what was expected and what came', () => {
    expect(() =>
      coerceToSchema('http.port', 'eighty', { type: 'integer', minimum: 0, maximum: 65535 }, 'env X'),
    ).toThrow('config http.port (from env X): expected an integer from 0 to 65535, got "eighty"');
    expect(() => coerceToSchema('k', 1.5, { type: 'integer' }, 'f')).toThrow('expected an integer, got 1.5');
    expect(() => coerceToSchema('k', 0, { type: 'number', exclusiveMinimum: 0 }, 'f')).toThrow(
      'expected a number above 0, got 0',
    );
    expect(() => coerceToSchema('k', 'maybe', { type: 'boolean' }, 'f')).toThrow('expected true or false');
    expect(() => coerceToSchema('k', 'x', { type: 'string', enum: ['a', 'b'] }, 'f')).toThrow('expected one of a, b');
    expect(() => coerceToSchema('k', ' ', { type: 'string', minLength: 1 }, 'f')).toThrow(
      'expected a string not empty',
    );
    expect(() => coerceToSchema('k', 'zone', { type: 'object' }, 'f')).toThrow(
      'config k (from f): "zone" is not key=value',
    );
    expect(() => coerceToSchema('k', ['x', 2], { type: 'array', items: { type: 'boolean' } }, 'f')).toThrow(
      'config k[0] (from f): expected true or false, got "x"',
    );
  });
});

describe('resolveConfig', () => {
  it('answers the validated value, else the declared default, and tells the source', () => {
    const config = resolve({ 'http.port': '9000', 'agent.labels': 'a=1' });
    expect(config.get('http.port')).toBe(9000);
    expect(config.get('http.cors_origins')).toEqual(['*']);
    expect(config.get('agent.labels')).toEqual({ a: '1' });
    expect(config.sourceOf('http.port')).toBe('env RUNNER_X');
    expect(config.sourceOf('http.cors_origins')).toBe('default');
    expect(config.find('http.cors_origins')).toBeUndefined();
    expect(config.values).toEqual({ http: { port: 9000 }, agent: { labels: { a: '1' } } });
    expect(config.declared().map((d) => [d.key, d.value, d.pluginId])).toContainEqual(['http.port', 9000, 'p']);
  });

  it('rebuilds a mapping key written as a YAML section from its leaves', () => {
    const config = resolve({ 'agent.labels.zone': 'a', 'agent.labels.rack': 7 });
    expect(config.get('agent.labels')).toEqual({ zone: 'a', rack: '7' });
    expect(() => resolve({ 'http.port.extra': 1 })).toThrow('unknown config key http.port.extra (from env RUNNER_X)');
  });

  it('reports every problem at once', () => {
    expect(() => resolve({ 'http.port': -1, 'agent.restart_mode': 'never', 'http.prot': 1 })).toThrow(
      [
        'config http.port (from env RUNNER_X): expected an integer from 0 to 65535, got -1',
        'config agent.restart_mode (from env RUNNER_X): expected one of auto, exec, got "never"',
        'unknown config key http.prot (from env RUNNER_X); did you mean http.port?',
      ].join('\n'),
    );
  });

  it('keeps keys of undeclared sections, with a warning, for an external plugin to read with a fallback', () => {
    const config = resolve({ 'greeter.loud': 'yes' });
    expect(config.warnings).toEqual([
      'unknown config key greeter.loud (from env RUNNER_X) (no loaded plugin reads section greeter; ignored)',
    ]);
    expect(config.get('greeter.loud', false)).toBe(true);
    expect(config.get('greeter.volume', 3)).toBe(3);
  });

  it('refuses a key two plugins declare, naming both', () => {
    expect(() =>
      resolveConfig({
        dataDir: '/d',
        entries: new Map(),
        declarers: [
          { pluginId: 'one', config: { 'x.y': { schema: { type: 'string' }, help: 'h' } } },
          { pluginId: 'two', config: { 'x.y': { schema: { type: 'string' }, help: 'h' } } },
        ],
      }),
    ).toThrow('config key x.y is declared by both plugin one and plugin two');
  });

  it('checks keywords beyond its own with TypeBox, loaded only then', () => {
    const config = { 'auth.issuer': { schema: Type.String({ pattern: '^https://' }), help: 'issuer' } };
    expect(resolve({ 'auth.issuer': 'https://id.example' }, config).get('auth.issuer')).toBe('https://id.example');
    expect(() => resolve({ 'auth.issuer': 'http://id.example' }, config)).toThrow(
      'config auth.issuer (from env RUNNER_X): Expected string to match \'^https://\', got "http://id.example"',
    );
  });
});
