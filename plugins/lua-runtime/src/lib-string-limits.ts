import { formatBytes } from '@runner/plugin-sdk';
import fengari, { type LuaState } from 'fengari';
import { hostOf } from './host.js';
import { luaString } from './lua-strings.js';

const { lua, lauxlib } = fengari;

/** The memory limit of a script when its run sets none (`engine.memory_limit`'s default). */
export const DEFAULT_MEMORY_LIMIT_BYTES = 512 * 1024 * 1024;

/**
 * `string.rep` and `table.concat` that check the size of what they would build against the
 * script's memory limit before building it. Each is one library call: fengari's own versions
 * append piece by piece (1 GiB of string.rep held the event loop for 19 s), and nothing can stop a
 * script inside a call. These allocate the result once and fill it by doubling copies (1 GiB in
 * well under a second), and refuse a result over the limit outright with
 * `memory limit of 512 MiB exceeded (...)`. Semantics and error messages are Lua 5.3's.
 */
export function installStringLimits(L: LuaState): void {
  lua.lua_getglobal(L, luaString('string'));
  lua.lua_pushjsfunction(L, rep);
  lua.lua_setfield(L, -2, luaString('rep'));
  lua.lua_pop(L, 1);
  lua.lua_getglobal(L, luaString('table'));
  lua.lua_pushjsfunction(L, concat);
  lua.lua_setfield(L, -2, luaString('concat'));
  lua.lua_pop(L, 1);
}

/** Raises the limit error when `bytes` is over the running script's limit. */
function checkSize(L: LuaState, bytes: number, what: string): void {
  const host = hostOf(L);
  const limit = host.environment.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
  if (bytes > limit) {
    // Inside the VM (`..`) the running Lua frame may have no free slot for the message: make one.
    lua.lua_checkstack(L, 4);
    host.raise(
      L,
      `memory limit of ${formatBytes(limit)} exceeded (${what} would build a string of ${formatBytes(bytes)})`,
    );
  }
}

/**
 * The size check of `..` (fengari-patch.mjs puts a call to it in fengari's luaV_concat, where the
 * bytes are counted and not yet allocated): a doubling `s = s .. s` stops at the limit.
 */
export function checkConcatSize(L: LuaState, bytes: number): void {
  checkSize(L, bytes, "'..'");
}

function rep(L: LuaState): number {
  const s = lauxlib.luaL_checklstring(L, 1);
  const n = lauxlib.luaL_checkinteger(L, 2);
  const sep = lauxlib.luaL_optlstring(L, 3, null) ?? new Uint8Array(0);
  if (n <= 0) {
    lua.lua_pushstring(L, new Uint8Array(0));
    return 1;
  }
  const total = s.length * n + sep.length * (n - 1);
  checkSize(L, total, 'string.rep');
  const out = new Uint8Array(total);
  out.set(s, 0);
  if (sep.length > 0 && n > 1) out.set(sep, s.length);
  // One unit is s..sep; double the filled prefix until the whole is written.
  const unit = s.length + sep.length;
  let filled = n > 1 ? unit : s.length;
  while (filled < total) {
    const size = Math.min(filled, total - filled);
    out.copyWithin(filled, 0, size);
    filled += size;
  }
  lua.lua_pushstring(L, out);
  return 1;
}

function concat(L: LuaState): number {
  lauxlib.luaL_checktype(L, 1, lua.LUA_TTABLE);
  const sep = lauxlib.luaL_optlstring(L, 2, null) ?? new Uint8Array(0);
  const first = lauxlib.luaL_optinteger(L, 3, 1);
  const last = lua.lua_isnoneornil(L, 4) ? lauxlib.luaL_len(L, 1) : lauxlib.luaL_checkinteger(L, 4);
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let i = first; i <= last; i++) {
    lua.lua_geti(L, 1, i);
    if (!lua.lua_isstring(L, -1)) {
      lauxlib.luaL_error(L, luaString("invalid value (at index %d) in table for 'concat'"), i);
    }
    const part = lua.lua_tostring(L, -1)!;
    lua.lua_pop(L, 1);
    parts.push(part);
    total += part.length + (i < last ? sep.length : 0);
  }
  checkSize(L, total, 'table.concat');
  const out = new Uint8Array(total);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) {
      out.set(sep, at);
      at += sep.length;
    }
    out.set(parts[i], at);
    at += parts[i].length;
  }
  lua.lua_pushstring(L, out);
  return 1;
}
