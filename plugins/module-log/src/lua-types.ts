/** The Lua type name of a value that crossed from Lua, for error messages (`got table`). */
export function luaType(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return 'table';
  if (typeof value === 'object') return (value as { kind?: unknown }).kind === 'lua-function' ? 'function' : 'table';
  return typeof value;
}

/** A Lua table converted to a JS object; an empty Lua table may arrive as `[]`, which counts too. */
export function isTable(value: unknown): value is Record<string, unknown> {
  return luaType(value) === 'table';
}
