import { InvalidInputError } from './errors.js';
import { luaType, type LuaValue } from './lua-module.js';

/**
 * Reading the arguments a Lua script passed to a module function, with messages in the script
 * author's terms (`docker.run: option ports must be a list of strings, got string "80"`). Every
 * reader takes the function's qualified name first, for that message.
 */

/** `nil`, `number 644`, `string "abc"`: the type, and the value when it is short enough to help. */
export function describeLuaValue(value: unknown): string {
  const type = luaType(value);
  if (type === 'string') {
    const text = value as string;
    return `string ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`;
  }
  if (type === 'number' || type === 'boolean') return `${type} ${String(value)}`;
  return type;
}

/** A named-options table, or `{}` for nil; an unknown key raises, so a typo (`timout`) is not ignored. */
export function readLuaOptions(
  fn: string,
  position: number,
  value: LuaValue,
  known: readonly string[],
): Record<string, LuaValue> {
  if (value === null || value === undefined) return {};
  if (Array.isArray(value)) {
    if (value.length === 0) return {};
    throw new InvalidInputError(`${fn}: argument ${position} must be a table of named options, got a list`);
  }
  if (luaType(value) !== 'table') {
    throw new InvalidInputError(
      `${fn}: argument ${position} must be a table of options, got ${describeLuaValue(value)}`,
    );
  }
  const options = value as Record<string, LuaValue>;
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw new InvalidInputError(`${fn}: unknown option "${key}" (known: ${known.join(', ')})`);
  }
  return options;
}

/** A required non-empty string argument. */
export function luaString(fn: string, what: string, value: LuaValue): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidInputError(`${fn}: ${what} must be a non-empty string, got ${describeLuaValue(value)}`);
  }
  return value;
}

/** An optional string (nil gives undefined); numbers are taken as their text. */
export function luaOptionalString(fn: string, what: string, value: LuaValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'number') return String(value);
  return luaString(fn, what, value);
}

export function luaOptionalBoolean(fn: string, what: string, value: LuaValue): boolean | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'boolean')
    throw new InvalidInputError(`${fn}: ${what} must be true or false, got ${describeLuaValue(value)}`);
  return value;
}

export function luaOptionalNumber(fn: string, what: string, value: LuaValue): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidInputError(`${fn}: ${what} must be a number, got ${describeLuaValue(value)}`);
  }
  return value;
}

/** A list of strings; a single string is a list of one. Nil gives []. */
export function luaStringList(fn: string, what: string, value: LuaValue): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) {
    // An empty Lua table arrives as {} or [].
    if (luaType(value) === 'table' && Object.keys(value as object).length === 0) return [];
    throw new InvalidInputError(`${fn}: ${what} must be a list of strings, got ${describeLuaValue(value)}`);
  }
  return value.map((item, i) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number') return String(item);
    throw new InvalidInputError(`${fn}: ${what}[${i + 1}] must be a string, got ${describeLuaValue(item)}`);
  });
}

/** A table of NAME = value (strings, numbers or booleans, given as text). Nil gives {}. */
export function luaStringMap(fn: string, what: string, value: LuaValue): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (Array.isArray(value) && value.length === 0) return {};
  if (luaType(value) !== 'table' || Array.isArray(value)) {
    throw new InvalidInputError(`${fn}: ${what} must be a table of name = value, got ${describeLuaValue(value)}`);
  }
  const map: Record<string, string> = {};
  for (const [name, item] of Object.entries(value as Record<string, LuaValue>)) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') map[name] = String(item);
    else
      throw new InvalidInputError(`${fn}: ${what}.${name} must be a string or number, got ${describeLuaValue(item)}`);
  }
  return map;
}

/** A plain JSON value from what a tool or SDK returned, for Lua: undefined dropped, dates as ISO text. */
export function toLuaValue(value: unknown): LuaValue {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(toLuaValue);
  if (typeof value === 'object') {
    const out: Record<string, LuaValue> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = toLuaValue(item);
    return out;
  }
  if (typeof value === 'function' || typeof value === 'symbol') return null;
  return value as LuaValue;
}
