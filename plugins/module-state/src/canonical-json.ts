import { luaType } from '@runner/plugin-sdk';

/**
 * JSON with object keys sorted at every depth, so two tables with the same content compare equal
 * whatever order their keys were set in. An empty table is `[]` whether it arrived as `{}` or `[]`:
 * Lua has one empty table, and the runtime may convert it either way.
 * Throws on what JSON cannot hold, naming where it is (`value.handler`).
 */
export function canonicalJson(value: unknown, where: string): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value))
        throw new Error(`${where} is ${value}, which cannot be stored (only finite numbers)`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v, i) => canonicalJson(v, `${where}[${i + 1}]`)).join(',')}]`;
  if (typeof value === 'object' && luaType(value) === 'table') {
    const keys = Object.keys(value).sort();
    if (keys.length === 0) return '[]';
    const record = value as Record<string, unknown>;
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k], `${where}.${k}`)}`).join(',')}}`;
  }
  throw new Error(`${where} is a ${luaType(value)}; only strings, numbers, booleans and tables can be stored`);
}
