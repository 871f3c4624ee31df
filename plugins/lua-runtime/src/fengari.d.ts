// fengari ships no types. This declares the part of its C-like API this plugin uses; fengari
// mirrors Lua 5.3's lua.h/lauxlib.h/lualib.h, with Uint8Array for Lua strings.
declare module 'fengari' {
  /** A lua_State (one thread of a Lua state). Opaque. */
  export interface LuaState {
    readonly __fengariState: never;
  }
  /** Lua strings are byte arrays; most API functions also accept a JS string for input. */
  export type LuaString = Uint8Array;
  export type LuaStringInput = Uint8Array | string;
  export type LuaJsFunction = (L: LuaState) => number;
  export type LuaKFunction<C = any> = (L: LuaState, status: number, ctx: C) => number;
  export type LuaHook = (L: LuaState, ar: lua_Debug) => void;
  /** From lua_toproxy: pushes the value it holds onto a thread of the same state. */
  export type LuaProxy = (L: LuaState) => void;

  export class lua_Debug {
    event: number;
    name: LuaString | null;
    namewhat: LuaString | null;
    what: LuaString | null;
    source: LuaString | null;
    currentline: number;
    linedefined: number;
    short_src: LuaString | null;
  }

  interface LuaApi {
    LUA_OK: 0;
    LUA_YIELD: 1;
    LUA_ERRRUN: 2;
    LUA_ERRSYNTAX: 3;
    LUA_ERRMEM: 4;
    LUA_ERRERR: 6;
    LUA_MULTRET: -1;
    LUA_REGISTRYINDEX: number;
    LUA_MASKCOUNT: number;
    LUA_TNONE: -1;
    LUA_TNIL: 0;
    LUA_TBOOLEAN: 1;
    LUA_TLIGHTUSERDATA: 2;
    LUA_TNUMBER: 3;
    LUA_TSTRING: 4;
    LUA_TTABLE: 5;
    LUA_TFUNCTION: 6;
    LUA_TUSERDATA: 7;
    LUA_TTHREAD: 8;
    lua_Debug: typeof lua_Debug;
    lua_upvalueindex(i: number): number;
    lua_absindex(L: LuaState, idx: number): number;
    lua_atnativeerror(L: LuaState, f: LuaJsFunction): LuaJsFunction | undefined;
    lua_call(L: LuaState, nargs: number, nresults: number): void;
    lua_checkstack(L: LuaState, n: number): boolean;
    lua_concat(L: LuaState, n: number): void;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_error(L: LuaState): never;
    lua_getfield(L: LuaState, idx: number, k: LuaStringInput): number;
    lua_geti(L: LuaState, idx: number, n: number): number;
    lua_getglobal(L: LuaState, name: LuaStringInput): number;
    lua_getinfo(L: LuaState, what: LuaStringInput, ar: lua_Debug): number;
    lua_getmetatable(L: LuaState, idx: number): boolean;
    lua_getstack(L: LuaState, level: number, ar: lua_Debug): number;
    lua_gettop(L: LuaState): number;
    lua_insert(L: LuaState, idx: number): void;
    lua_isinteger(L: LuaState, idx: number): boolean;
    lua_isstring(L: LuaState, idx: number): boolean;
    lua_isnil(L: LuaState, idx: number): boolean;
    lua_isnone(L: LuaState, idx: number): boolean;
    lua_isnoneornil(L: LuaState, idx: number): boolean;
    lua_isyieldable(L: LuaState): boolean;
    lua_newthread(L: LuaState): LuaState;
    lua_newuserdata(L: LuaState, size?: number): any;
    lua_next(L: LuaState, idx: number): number;
    lua_pcallk<C>(L: LuaState, nargs: number, nresults: number, errfunc: number, ctx: C, k: LuaKFunction<C>): number;
    lua_pop(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, b: boolean | number): void;
    lua_pushcclosure(L: LuaState, f: LuaJsFunction, n: number): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushjsfunction(L: LuaState, f: LuaJsFunction): void;
    lua_pushliteral(L: LuaState, s: string): void;
    lua_pushnil(L: LuaState): void;
    lua_pushglobaltable(L: LuaState): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushstring(L: LuaState, s: LuaStringInput): LuaString;
    lua_pushthread(L: LuaState): boolean;
    lua_pushvalue(L: LuaState, idx: number): void;
    lua_rawequal(L: LuaState, a: number, b: number): boolean;
    lua_rawget(L: LuaState, idx: number): number;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_rawlen(L: LuaState, idx: number): number;
    lua_rawset(L: LuaState, idx: number): void;
    lua_rawseti(L: LuaState, idx: number, n: number): void;
    lua_remove(L: LuaState, idx: number): void;
    lua_resume(L: LuaState, from: LuaState | null, nargs: number): number;
    lua_rotate(L: LuaState, idx: number, n: number): void;
    lua_setfield(L: LuaState, idx: number, k: LuaStringInput): void;
    lua_setglobal(L: LuaState, name: LuaStringInput): void;
    lua_sethook(L: LuaState, f: LuaHook | null, mask: number, count: number): void;
    lua_setmetatable(L: LuaState, idx: number): void;
    lua_settop(L: LuaState, idx: number): void;
    lua_status(L: LuaState): number;
    lua_stringtonumber(L: LuaState, s: LuaString): number;
    lua_toboolean(L: LuaState, idx: number): boolean;
    lua_tocfunction(L: LuaState, idx: number): LuaJsFunction | null;
    lua_tointeger(L: LuaState, idx: number): number;
    lua_tointegerx(L: LuaState, idx: number): number | false;
    lua_tonumber(L: LuaState, idx: number): number;
    lua_topointer(L: LuaState, idx: number): object | null;
    lua_toproxy(L: LuaState, idx: number): LuaProxy;
    lua_tostring(L: LuaState, idx: number): LuaString | null;
    lua_tothread(L: LuaState, idx: number): LuaState | null;
    lua_touserdata(L: LuaState, idx: number): any;
    lua_type(L: LuaState, idx: number): number;
    lua_typename(L: LuaState, t: number): LuaString;
    lua_xmove(from: LuaState, to: LuaState, n: number): void;
    lua_yield(L: LuaState, nresults: number): number;
    lua_yieldk<C>(L: LuaState, nresults: number, ctx: C, k: LuaKFunction<C> | null): number;
  }

  interface LauxApi {
    luaL_argerror(L: LuaState, arg: number, extramsg: LuaStringInput): never;
    luaL_checkany(L: LuaState, arg: number): void;
    luaL_checkinteger(L: LuaState, arg: number): number;
    luaL_checklstring(L: LuaState, arg: number): LuaString;
    luaL_checknumber(L: LuaState, arg: number): number;
    luaL_checkoption(L: LuaState, arg: number, def: string | null, options: LuaStringInput[]): number;
    luaL_checkstack(L: LuaState, sz: number, msg: LuaStringInput | null): void;
    luaL_checkstring(L: LuaState, arg: number): LuaString;
    luaL_checktype(L: LuaState, arg: number, t: number): void;
    luaL_len(L: LuaState, idx: number): number;
    luaL_checkudata(L: LuaState, arg: number, tname: LuaStringInput): any;
    luaL_error(L: LuaState, fmt: LuaStringInput, ...args: unknown[]): never;
    luaL_loadbufferx(
      L: LuaState,
      buff: LuaString,
      size: number,
      name: LuaStringInput,
      mode: LuaStringInput | null,
    ): number;
    luaL_newmetatable(L: LuaState, tname: LuaStringInput): number;
    luaL_newstate(): LuaState;
    luaL_optinteger(L: LuaState, arg: number, def: number): number;
    luaL_optlstring(L: LuaState, arg: number, def: LuaString | null): LuaString | null;
    luaL_optnumber(L: LuaState, arg: number, def: number): number;
    luaL_optstring(L: LuaState, arg: number, def: LuaStringInput | null): LuaString | null;
    luaL_ref(L: LuaState, t: number): number;
    luaL_unref(L: LuaState, t: number, ref: number): void;
    luaL_requiref(L: LuaState, modname: LuaStringInput, openf: LuaJsFunction, glb: number | boolean): void;
    luaL_setfuncs(L: LuaState, l: Record<string, LuaJsFunction | null>, nup: number): void;
    luaL_setmetatable(L: LuaState, tname: LuaStringInput): void;
    luaL_testudata(L: LuaState, arg: number, tname: LuaStringInput): any;
    luaL_tolstring(L: LuaState, idx: number): LuaString;
    luaL_traceback(L: LuaState, L1: LuaState, msg: LuaStringInput | null, level: number): void;
    luaL_typename(L: LuaState, idx: number): LuaString;
    luaL_where(L: LuaState, level: number): void;
  }

  interface LualibApi {
    luaopen_base: LuaJsFunction;
    luaopen_coroutine: LuaJsFunction;
    luaopen_debug: LuaJsFunction;
    luaopen_math: LuaJsFunction;
    luaopen_os: LuaJsFunction;
    luaopen_package: LuaJsFunction;
    luaopen_string: LuaJsFunction;
    luaopen_table: LuaJsFunction;
    luaopen_utf8: LuaJsFunction;
  }

  export const lua: LuaApi;
  export const lauxlib: LauxApi;
  export const lualib: LualibApi;
  export function to_luastring(s: string, cache?: boolean): LuaString;
  export function to_jsstring(s: LuaString, from?: number, to?: number, replacementChar?: boolean): string;

  const fengari: {
    lua: LuaApi;
    lauxlib: LauxApi;
    lualib: LualibApi;
    to_luastring: typeof to_luastring;
    to_jsstring: typeof to_jsstring;
  };
  export default fengari;
}

// fengari's internals, for state-copy.ts only (see there why, and what guards against their change).
declare module 'fengari/src/defs.js' {
  const defs: {
    constant_types: Record<
      | 'LUA_TNIL'
      | 'LUA_TBOOLEAN'
      | 'LUA_TLIGHTUSERDATA'
      | 'LUA_TNUMFLT'
      | 'LUA_TNUMINT'
      | 'LUA_TSHRSTR'
      | 'LUA_TLNGSTR'
      | 'LUA_TTABLE'
      | 'LUA_TLCL'
      | 'LUA_TLCF'
      | 'LUA_TCCL'
      | 'LUA_TUSERDATA'
      | 'LUA_TTHREAD',
      number
    >;
  };
  export default defs;
}
declare module 'fengari/src/lobject.js' {
  import type { LuaState } from 'fengari';
  const lobject: {
    TValue: new (type: number, value: unknown) => any;
    CClosure: new (L: LuaState, f: (L: LuaState) => number, n: number) => any;
    Udata: new (L: LuaState, size: number) => any;
  };
  export default lobject;
}
declare module 'fengari/src/ltable.js' {
  import type { LuaState } from 'fengari';
  const ltable: { Table: new (L: LuaState) => any };
  export default ltable;
}
declare module 'fengari/src/lopcodes.js' {
  const lopcodes: {
    /** Lua 5.3's opcodes by name (`OP_MOVE`: 0, ...). */
    OpCodesI: Record<string, number>;
    /** Set in a B or C operand that names a constant rather than a register. */
    BITRK: number;
  };
  export default lopcodes;
}
