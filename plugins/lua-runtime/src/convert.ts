import { userKeyed, type LuaFunctionRef, type LuaLazyTable, type LuaValue } from '@runner/plugin-sdk';
import fengari, { type LuaProxy, type LuaState } from 'fengari';
import { jsString, luaString } from './lua-strings.js';

const { lua } = fengari;

/** A value that cannot cross between Lua and JavaScript; `path` says where it sits (`value.a[2]`). */
export class ConversionError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.name = 'ConversionError';
    this.path = path;
  }
}

/** Deeper nesting is almost surely a mistake and would only exhaust the stack. */
export const MAX_DEPTH = 100;

export interface ToJsOptions {
  /** Give the `tostring`-like text of unconvertible values (REPL) instead of failing (scripts). */
  lenient: boolean;
  /** Makes the handle through which JavaScript calls a Lua function. */
  functionRef(proxy: LuaProxy): LuaFunctionRef;
}

/**
 * The Lua value at `idx` as JavaScript: nil is null, integers and floats are numbers, strings are
 * decoded as UTF-8, a table whose keys are exactly 1..n is an array, any other table (including an
 * empty one) is an object with string keys, and a function is a LuaFunctionRef.
 * Never raises a Lua error, so it is safe outside protected calls.
 */
export function toJs(L: LuaState, idx: number, options: ToJsOptions, path = 'value'): LuaValue {
  return convert(L, lua.lua_absindex(L, idx), options, new Set(), 0, path);
}

function convert(
  L: LuaState,
  idx: number,
  options: ToJsOptions,
  seen: Set<object>,
  depth: number,
  path: string,
): LuaValue {
  switch (lua.lua_type(L, idx)) {
    case lua.LUA_TNIL:
    case lua.LUA_TNONE:
      return null;
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, idx);
    case lua.LUA_TNUMBER:
      return lua.lua_isinteger(L, idx) ? lua.lua_tointeger(L, idx) : lua.lua_tonumber(L, idx);
    case lua.LUA_TSTRING:
      return jsString(lua.lua_tostring(L, idx)!);
    case lua.LUA_TTABLE:
      return convertTable(L, idx, options, seen, depth, path);
    case lua.LUA_TFUNCTION:
      return options.functionRef(lua.lua_toproxy(L, idx));
    default: {
      const type = jsString(lua.lua_typename(L, lua.lua_type(L, idx)));
      if (options.lenient) return `<${type}>`;
      throw new ConversionError(path, `a ${type} cannot be converted to a JavaScript value`);
    }
  }
}

function convertTable(
  L: LuaState,
  idx: number,
  options: ToJsOptions,
  seen: Set<object>,
  depth: number,
  path: string,
): LuaValue {
  const identity = lua.lua_topointer(L, idx)!;
  if (seen.has(identity)) {
    if (options.lenient) return '<cycle>';
    throw new ConversionError(path, 'the table contains itself (a cycle) and cannot be converted');
  }
  if (depth >= MAX_DEPTH) {
    if (options.lenient) return '<too deep>';
    throw new ConversionError(path, `tables nested more than ${MAX_DEPTH} deep cannot be converted`);
  }
  if (!lua.lua_checkstack(L, 4)) throw new ConversionError(path, 'Lua stack exhausted');
  seen.add(identity);
  const keys: (string | number)[] = [];
  const values: LuaValue[] = [];
  let sequence = true;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx) !== 0) {
    let key: string | number;
    // Never lua_tostring a number key: it would convert the key in place and confuse lua_next.
    switch (lua.lua_type(L, -2)) {
      case lua.LUA_TNUMBER:
        if (lua.lua_isinteger(L, -2)) {
          key = lua.lua_tointeger(L, -2);
        } else {
          key = String(lua.lua_tonumber(L, -2));
          sequence = false;
        }
        break;
      case lua.LUA_TSTRING:
        key = jsString(lua.lua_tostring(L, -2)!);
        sequence = false;
        break;
      case lua.LUA_TBOOLEAN:
        key = String(lua.lua_toboolean(L, -2));
        sequence = false;
        break;
      default: {
        const type = jsString(lua.lua_typename(L, lua.lua_type(L, -2)));
        if (!options.lenient) {
          lua.lua_pop(L, 2);
          seen.delete(identity);
          throw new ConversionError(path, `a table with a ${type} key cannot be converted`);
        }
        key = `<${type}>`;
        sequence = false;
      }
    }
    let value: LuaValue;
    try {
      value = convert(L, lua.lua_gettop(L), options, seen, depth + 1, childPath(path, key));
    } catch (error) {
      lua.lua_pop(L, 2);
      seen.delete(identity);
      throw error;
    }
    lua.lua_pop(L, 1);
    keys.push(key);
    values.push(value);
  }
  seen.delete(identity);

  const n = keys.length;
  if (n > 0 && sequence && isOneToN(keys as number[])) {
    const array: LuaValue[] = new Array(n);
    for (let i = 0; i < n; i++) array[(keys[i] as number) - 1] = values[i];
    return array;
  }
  // No prototype: "__proto__" is a key like any other, and an absent "constructor" reads as nil.
  const object = userKeyed<LuaValue>();
  for (let i = 0; i < n; i++) object[String(keys[i])] = values[i];
  return object;
}

/** Keys are distinct (they come from one table), so n integers all within 1..n are exactly 1..n. */
function isOneToN(keys: number[]): boolean {
  const n = keys.length;
  for (const k of keys) if (k < 1 || k > n) return false;
  return true;
}

function childPath(path: string, key: string | number): string {
  return typeof key === 'number' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? `${path}[${JSON.stringify(key)}]`
    : `${path}.${key}`;
}

export interface PushOptions {
  /** Pushes a LuaFunctionRef back as the Lua function it stands for; throws when it cannot. */
  pushFunctionRef(L: LuaState, ref: LuaFunctionRef, path: string): void;
  /** Pushes a plain JavaScript function as a Lua function. */
  pushJsFunction(L: LuaState, fn: (...args: any[]) => unknown, path: string): void;
}

/** Largest magnitude that stays a Lua integer: fengari's integers are 32-bit. */
const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

/**
 * Pushes a JavaScript value: null and undefined as nil, whole numbers that fit fengari's 32-bit
 * integers as integers (other numbers as floats), strings as UTF-8, Uint8Array as raw bytes, Date as
 * its ISO text, arrays as sequences, other objects as tables of their own enumerable keys.
 * Throws a ConversionError (pushing nothing) for cycles, symbols and LuaMultiple inside a value.
 */
export function pushJs(L: LuaState, value: unknown, options: PushOptions, path = 'value'): void {
  const top = lua.lua_gettop(L);
  try {
    push(L, value, options, new Set(), 0, path);
  } catch (error) {
    lua.lua_settop(L, top);
    throw error;
  }
}

function push(L: LuaState, value: unknown, options: PushOptions, seen: Set<object>, depth: number, path: string): void {
  if (pushScalar(L, value)) return;
  switch (typeof value) {
    case 'undefined':
      lua.lua_pushnil(L);
      return;
    case 'bigint':
      if (value >= BigInt(INT_MIN) && value <= BigInt(INT_MAX)) lua.lua_pushinteger(L, Number(value));
      else lua.lua_pushnumber(L, Number(value));
      return;
    case 'function':
      options.pushJsFunction(L, value as (...args: any[]) => unknown, path);
      return;
    case 'symbol':
      throw new ConversionError(path, 'a symbol cannot be converted to a Lua value');
    case 'object':
      break;
  }
  if (value === null) {
    lua.lua_pushnil(L);
    return;
  }
  const object = value as object;
  if (object instanceof Uint8Array) {
    lua.lua_pushstring(L, new Uint8Array(object));
    return;
  }
  if (object instanceof Date) {
    lua.lua_pushstring(L, luaString(Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString()));
    return;
  }
  const kind = (object as { kind?: unknown }).kind;
  if (kind === 'lua-function') {
    options.pushFunctionRef(L, object as LuaFunctionRef, path);
    return;
  }
  if (kind === 'lua-lazy-table') {
    pushLazyTable(L, (object as LuaLazyTable).source, options, path);
    return;
  }
  if (kind === 'lua-multiple') {
    throw new ConversionError(path, 'luaMultiple(...) is only allowed as the whole return value of a module function');
  }
  if (seen.has(object)) throw new ConversionError(path, 'the value contains itself (a cycle) and cannot be converted');
  if (depth >= MAX_DEPTH)
    throw new ConversionError(path, `values nested more than ${MAX_DEPTH} deep cannot be converted`);
  if (!lua.lua_checkstack(L, 4)) throw new ConversionError(path, 'Lua stack exhausted');
  seen.add(object);
  if (Array.isArray(object)) {
    lua.lua_createtable(L, object.length, 0);
    for (let i = 0; i < object.length; i++) {
      const item = object[i];
      if (item === undefined || item === null) continue;
      if (!pushScalar(L, item)) push(L, item, options, seen, depth + 1, `${path}[${i}]`);
      lua.lua_rawseti(L, -2, i + 1);
    }
  } else {
    const entries =
      object instanceof Map ? [...object.entries()].map(([k, v]) => [String(k), v] as const) : Object.entries(object);
    lua.lua_createtable(L, 0, entries.length);
    for (const [key, item] of entries) {
      if (item === undefined) continue;
      lua.lua_pushstring(L, luaString(key));
      if (!pushScalar(L, item)) push(L, item, options, seen, depth + 1, childPath(path, key));
      lua.lua_rawset(L, -3);
    }
  }
  seen.delete(object);
}

/**
 * Pushes a string, a boolean or a number as push would, and says whether it did. Entries of a
 * table go through here first, so that the path of an entry (for errors and function names) is
 * built only for the values that may need it: an event payload is mostly scalars.
 */
function pushScalar(L: LuaState, value: unknown): boolean {
  switch (typeof value) {
    case 'string':
      lua.lua_pushstring(L, luaString(value));
      return true;
    case 'boolean':
      lua.lua_pushboolean(L, value);
      return true;
    case 'number':
      if (Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX && !Object.is(value, -0))
        lua.lua_pushinteger(L, value);
      else lua.lua_pushnumber(L, value);
      return true;
    default:
      return false;
  }
}

/**
 * A table whose entries are converted when a script first reads them (then kept in the table) or
 * when it iterates with `pairs`. Large context such as every earlier task's results would otherwise
 * be converted into each task's fresh state, whether or not the script reads it.
 */
function pushLazyTable(
  L: LuaState,
  source: Readonly<Record<string, unknown>>,
  options: PushOptions,
  path: string,
): void {
  const convertInto = (L1: LuaState, key: string, value: unknown): void => {
    push(L1, value, options, new Set(), 0, childPath(path, key));
    lua.lua_pushstring(L1, luaString(key));
    lua.lua_pushvalue(L1, -2);
    lua.lua_rawset(L1, 1);
  };
  lua.lua_createtable(L, 0, 0);
  lua.lua_createtable(L, 0, 2);
  lua.lua_pushjsfunction(L, (L1: LuaState) => {
    if (lua.lua_type(L1, 2) !== lua.LUA_TSTRING) return 0;
    const key = jsString(lua.lua_tostring(L1, 2) as Uint8Array);
    const value = Object.prototype.hasOwnProperty.call(source, key) ? source[key] : undefined;
    if (value === undefined) return 0;
    convertInto(L1, key, value);
    return 1;
  });
  lua.lua_setfield(L, -2, luaString('__index'));
  lua.lua_pushjsfunction(L, (L1: LuaState) => {
    for (const key of Object.keys(source)) {
      lua.lua_pushstring(L1, luaString(key));
      const present = lua.lua_rawget(L1, 1) !== lua.LUA_TNIL;
      lua.lua_pop(L1, 1);
      if (present) continue;
      const value = source[key];
      if (value === undefined) continue;
      convertInto(L1, key, value);
      lua.lua_pop(L1, 1);
    }
    lua.lua_getglobal(L1, luaString('next'));
    lua.lua_pushvalue(L1, 1);
    lua.lua_pushnil(L1);
    return 3;
  });
  lua.lua_setfield(L, -2, luaString('__pairs'));
  lua.lua_setmetatable(L, -2);
}
