// Copies a built Lua state into a new one: the cheap way to give every run a fresh state.
//
// Building a state through the C API costs about 0.5 ms (nine standard libraries, the runtime's io,
// os and base changes, every module's functions): each `lua_setfield` copies its key into a new
// string and hashes it byte by byte, and the garbage left behind costs as much again in GC. A
// fresh state made by copying one built once (its "template") holds the same tables, in the same
// order, with the same functions, for about a twentieth of that.
//
// The copy works on fengari's objects (ltable's Table, lobject's TValue/CClosure/Udata), which its
// C-like API does not reach. fengari is pinned to 0.1.x; state-copy.test.ts compares a copy with a
// state built through the API, object by object, so a fengari that changes them fails that test,
// and the runtime builds through the API whenever a copy meets an object it does not know.
//
// Why a copy is as fresh as a built state (nothing one run does can reach another):
// - every mutable object reachable from the new state is new: tables (entries, metatables), C
//   closures (upvalues), userdata (metatable, user value, data), and every TValue holding them;
// - what is shared is immutable: strings (a TString's only mutable field caches its hash, a pure
//   function of its bytes), numbers, booleans, the JSLIBS light userdata key (a constant), and
//   JavaScript functions. Those hold no state of their own: fengari's library functions are pure
//   except math.random's seed (module-level in fengari; the runtime replaces math.random and
//   math.randomseed with ones that keep the seed per state), and the runtime's find their Host
//   (output, files, the running script) from the state they are called with (`hostOf`);
// - Lua functions (which would share prototypes and their closure caches) and threads other than
//   the main one are refused: the template has none, and a copy that met one would throw.
import fengari, { type LuaState } from 'fengari';
import defs from 'fengari/src/defs.js';
import lobject from 'fengari/src/lobject.js';
import ltable from 'fengari/src/ltable.js';

const { lauxlib } = fengari;
const {
  LUA_TNIL,
  LUA_TBOOLEAN,
  LUA_TLIGHTUSERDATA,
  LUA_TNUMFLT,
  LUA_TNUMINT,
  LUA_TSHRSTR,
  LUA_TLNGSTR,
  LUA_TTABLE,
  LUA_TLCF,
  LUA_TCCL,
  LUA_TUSERDATA,
  LUA_TTHREAD,
} = defs.constant_types;

/** fengari's internals as this file uses them (lstate.js, ltable.js, lobject.js). */
export interface TValue {
  type: number;
  value: any;
}
interface Entry {
  key: TValue;
  value: TValue;
  p: Entry | undefined;
  n: Entry | undefined;
}
export interface Table {
  strong: Map<unknown, Entry>;
  f: Entry | undefined;
  l: Entry | undefined;
  metatable: Table | null;
  flags: number;
}
export interface CClosure {
  f: (L: LuaState) => number;
  nupvalues: number;
  upvalue: TValue[];
}
export interface Udata {
  metatable: Table | null;
  uservalue: TValue;
  len: number;
  data: Record<string, unknown>;
}
export interface GlobalState {
  l_registry: TValue;
  /** Metatables of the basic types (strings'). */
  mt: (Table | null | undefined)[];
}
export interface StateInternals {
  l_G: GlobalState;
}

/** Thrown when the template holds something a copy cannot make fresh. */
export class UncopyableStateError extends Error {}

/** The global state of `L` (shared by all its threads). */
export function globalOf(L: LuaState): GlobalState {
  return (L as unknown as StateInternals).l_G;
}

/**
 * A new state holding a copy of everything reachable from `template`'s registry and its basic
 * types' metatables. `copyUserdata` gives the data of a userdata's copy (given a shallow copy).
 */
export function copyState(
  template: LuaState,
  copyUserdata: (data: Record<string, unknown>) => Record<string, unknown>,
): LuaState {
  const from = globalOf(template);
  const L = lauxlib.luaL_newstate();
  const to = globalOf(L);
  // Template object -> its copy; shared structure (a library table in _G and package.loaded, the
  // io handles in io and the registry) stays shared, and cycles (_G._G) end.
  const copies = new Map<object, object>();
  copies.set(template, L);

  const value = (type: number, v: any): any => {
    switch (type) {
      case LUA_TNIL:
      case LUA_TBOOLEAN:
      case LUA_TNUMFLT:
      case LUA_TNUMINT:
      case LUA_TSHRSTR:
      case LUA_TLNGSTR:
      case LUA_TLCF:
      case LUA_TLIGHTUSERDATA:
        return v;
      case LUA_TTABLE:
        return table(v);
      case LUA_TCCL:
        return closure(v);
      case LUA_TUSERDATA:
        return userdata(v);
      case LUA_TTHREAD: {
        const thread = copies.get(v);
        if (thread === undefined) throw new UncopyableStateError('the template holds a thread other than its main one');
        return thread;
      }
      default:
        throw new UncopyableStateError(`the template holds a value of type tag ${type}`);
    }
  };
  const tvalue = (tv: TValue): TValue => new lobject.TValue(tv.type, value(tv.type, tv.value));

  const table = (t: Table): Table => {
    const done = copies.get(t);
    if (done !== undefined) return done as Table;
    const copy: Table = new ltable.Table(L);
    copies.set(t, copy);
    if (t.metatable !== null) copy.metatable = table(t.metatable);
    // Unknown until looked up (fengari caches absent metamethods in `flags`; 0 is always safe).
    copy.flags = 0;
    // `strong` is in insertion order, as is the entry list `next` walks: the copy iterates alike.
    let last: Entry | undefined;
    for (const [hash, entry] of t.strong) {
      const key = tvalue(entry.key);
      // A key's hash is the key itself for objects, so an object key's copy hashes to the copy;
      // other hashes (strings, numbers, light userdata) do not depend on the state.
      const copyHash = key.value !== entry.key.value ? key.value : hash;
      const e: Entry = { key, value: tvalue(entry.value), p: last, n: undefined };
      if (last === undefined) copy.f = e;
      else last.n = e;
      last = e;
      copy.strong.set(copyHash, e);
    }
    copy.l = last;
    return copy;
  };

  const closure = (c: CClosure): CClosure => {
    const done = copies.get(c);
    if (done !== undefined) return done as CClosure;
    const copy: CClosure = new lobject.CClosure(L, c.f, c.nupvalues);
    copies.set(c, copy);
    for (let i = 0; i < c.nupvalues; i++) copy.upvalue[i] = tvalue(c.upvalue[i]);
    return copy;
  };

  const userdata = (u: Udata): Udata => {
    const done = copies.get(u);
    if (done !== undefined) return done as Udata;
    const copy: Udata = new lobject.Udata(L, u.len);
    copies.set(u, copy);
    if (u.metatable !== null) copy.metatable = table(u.metatable);
    copy.uservalue = tvalue(u.uservalue);
    copy.data = copyUserdata(Object.assign(Object.create(null), u.data));
    return copy;
  };

  if (from.l_registry.type !== LUA_TTABLE) throw new UncopyableStateError('the template has no registry');
  to.l_registry = tvalue(from.l_registry);
  for (let i = 0; i < from.mt.length; i++) {
    const mt = from.mt[i];
    to.mt[i] = mt === null || mt === undefined ? mt : table(mt);
  }
  return L;
}
