import { describe, expect, it } from 'vitest';
import { plugin } from '../../index.js';
import { luaCallContext, setUpLuaModules } from '@runner/plugin-sdk/testing';

describe('log', () => {
  it('writes each level to the call logger with structured fields', async () => {
    const { modules, specs } = await setUpLuaModules([plugin]);
    const log = modules.get('log')!;
    const { call, lines } = luaCallContext({ dryRun: true });
    log.debug(call, 'raw', { body: 'x' });
    log.info(call, 'deployed', { version: '1.2', hosts: 3, nested: { a: [1, 2] } });
    log.warn(call, 'disk', []);
    log.error(call, 'failed');
    // Logging happens in dry-run too: it is not a side effect.
    expect(lines).toEqual([
      { level: 'debug', message: 'raw', fields: { body: 'x' } },
      { level: 'info', message: 'deployed', fields: { version: '1.2', hosts: 3, nested: { a: [1, 2] } } },
      { level: 'warn', message: 'disk', fields: {} },
      { level: 'error', message: 'failed', fields: {} },
    ]);
    expect(Object.values(specs.get('log')!.functions).every((f) => !f.sideEffects && f.example)).toBe(true);
  });

  it('converts messages as tostring would, tables as JSON', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const { call, lines } = luaCallContext();
    for (const msg of [42, true, null, { a: 1 }, [1, 'x'], { kind: 'lua-function', call: async () => [] }]) {
      modules.get('log')!.info(call, msg);
    }
    expect(lines.map((l) => l.message)).toEqual(['42', 'true', 'nil', '{"a":1}', '[1,"x"]', 'function']);
  });

  it('names a bad fields argument', async () => {
    const { modules } = await setUpLuaModules([plugin]);
    const { call } = luaCallContext();
    expect(() => modules.get('log')!.warn(call, 'x', 'oops')).toThrow(
      'log.warn: argument 2 must be a table of fields, got string',
    );
    expect(() => modules.get('log')!.info(call, 'x', ['a'])).toThrow(
      'log.info: argument 2 must be a table with named fields (key = value), got a list',
    );
  });
});
