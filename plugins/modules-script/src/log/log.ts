import type { LogFields, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { isLuaTable, luaType } from '@runner/plugin-sdk';
import { LOG_LEVELS, type LogLevel } from './spec.js';

/** What Lua's tostring would print; tables as JSON because that is what a reader of the log wants. */
function messageText(value: LuaValue): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (luaType(value) === 'function') return 'function';
  try {
    return JSON.stringify(value, (_key, v) => (luaType(v) === 'function' ? 'function' : v));
  } catch {
    return String(value);
  }
}

function fieldsOf(level: LogLevel, value: LuaValue): LogFields | undefined {
  if (value === null || value === undefined) return undefined;
  if (!isLuaTable(value)) throw new Error(`log.${level}: argument 2 must be a table of fields, got ${luaType(value)}`);
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    throw new Error(`log.${level}: argument 2 must be a table with named fields (key = value), got a list`);
  }
  return value;
}

export function createLogModule(): LuaModuleImplementation<LogLevel> {
  const impl = {} as LuaModuleImplementation<LogLevel>;
  for (const level of LOG_LEVELS) {
    impl[level] = (call, msg, fields) => {
      call.logger[level](messageText(msg), fieldsOf(level, fields));
      return undefined;
    };
  }
  return impl;
}
