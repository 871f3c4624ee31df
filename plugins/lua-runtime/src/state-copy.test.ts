import { defineLuaModule } from '@runner/plugin-sdk';
import fengari from 'fengari';
import { describe, expect, it } from 'vitest';
import { Host } from './host.js';
import { ModuleRegistry } from './module-registry.js';
import { TimeSlicer } from './time-slicer.js';
import {
  copyState,
  globalOf,
  UncopyableStateError,
  type CClosure,
  type Table,
  type TValue,
  type Udata,
} from './state-copy.js';
import { fn, testRuntime } from './test-support.js';

const { lua, lauxlib } = fengari;

// fengari's type tags (defs.js), for reading the states' internals here.
const TABLE = 5;
const CCLOSURE = 6 | (2 << 4);
const LIGHT_FUNCTION = 6 | (1 << 4);
const USERDATA = 7;
const THREAD = 8;
const STRING_TAGS = new Set([4, 4 | (1 << 4)]);

function hosts() {
  const registry = new ModuleRegistry();
  registry.provide(defineLuaModule({ name: 'm', description: 'test module', functions: { f: fn(), g: fn() } }), {
    f: () => 1,
    g: () => 2,
  });
  const options = { modules: registry.modules(), timeSlicer: new TimeSlicer(5), hookInstructions: 1000 };
  const template = new Host(options);
  return {
    template,
    built: new Host(options),
    copy: () => new Host({ ...options, modules: [], template }),
  };
}

/** Every object (table, closure, userdata, and the TValues holding them) reachable from a state. */
function reachable(host: Host): Set<object> {
  const seen = new Set<object>();
  const visit = (tv: TValue): void => {
    seen.add(tv);
    const v = tv.value;
    if (seen.has(v)) return;
    if (tv.type === TABLE) {
      seen.add(v);
      const t = v as Table;
      if (t.metatable !== null) visit({ type: TABLE, value: t.metatable });
      for (const entry of t.strong.values()) {
        visit(entry.key);
        visit(entry.value);
      }
    } else if (tv.type === CCLOSURE) {
      seen.add(v);
      for (const up of (v as CClosure).upvalue) visit(up);
    } else if (tv.type === USERDATA) {
      seen.add(v);
      const u = v as Udata;
      seen.add(u.data);
      if (u.metatable !== null) visit({ type: TABLE, value: u.metatable });
      visit(u.uservalue);
    }
  };
  const g = globalOf(host.L);
  visit(g.l_registry);
  for (const mt of g.mt) if (mt) visit({ type: TABLE, value: mt });
  return seen;
}

/**
 * A description of a state's graph in which only what a script can tell apart remains: table keys
 * in iteration order, value types, JavaScript functions by identity (the template's are shared),
 * strings by content, the structure of sharing (a table met again is named by where it was first).
 */
function describeState(host: Host, functionName: Map<unknown, string>): unknown {
  const first = new Map<object, string>();
  const describe = (tv: TValue, path: string): unknown => {
    const v = tv.value;
    if (STRING_TAGS.has(tv.type)) return { string: new TextDecoder().decode(v.realstring) };
    if (tv.type === LIGHT_FUNCTION) return { fn: functionName.get(v) ?? name(functionName, v, path) };
    if (tv.type === THREAD) return { thread: v === host.L ? 'main' : 'other' };
    if (tv.type !== TABLE && tv.type !== CCLOSURE && tv.type !== USERDATA) return { type: tv.type, value: v };
    const seenAt = first.get(v);
    if (seenAt !== undefined) return { same: seenAt };
    first.set(v, path);
    if (tv.type === CCLOSURE) {
      const c = v as CClosure;
      return {
        closure: functionName.get(c.f) ?? name(functionName, c.f, path),
        upvalues: c.upvalue.map((u, i) => describe(u, `${path}^${i}`)),
      };
    }
    if (tv.type === USERDATA) {
      const u = v as Udata;
      const file = u.data.file;
      const std = Object.entries(host.stdFiles).find(([, f]) => f === file)?.[0];
      return {
        userdata: std ?? Object.keys(u.data),
        metatable: u.metatable && describe({ type: TABLE, value: u.metatable }, `${path}.<mt>`),
      };
    }
    const t = v as Table;
    const entries = [...t.strong.values()].map((e) => {
      const key = describe(e.key, `${path}[key]`);
      return [key, describe(e.value, `${path}[${JSON.stringify(key)}]`)];
    });
    return { table: entries, metatable: t.metatable && describe({ type: TABLE, value: t.metatable }, `${path}.<mt>`) };
  };
  const g = globalOf(host.L);
  return {
    registry: describe(g.l_registry, 'R'),
    mt: g.mt.map((mt, i) => mt && describe({ type: TABLE, value: mt }, `mt${i}`)),
  };
}

/** Names a JavaScript function by where it was first met, so that two states can be compared. */
function name(names: Map<unknown, string>, f: unknown, path: string): string {
  names.set(f, path);
  return path;
}

describe('copied Lua states', () => {
  it('hold what a state built through the API holds: same tables, keys in the same order, same functions', () => {
    const { built, copy } = hosts();
    const names = new Map<unknown, string>();
    const expected = describeState(built, names);
    expect(describeState(copy(), names)).toEqual(expected);
  });

  it('share no table, closure, userdata or TValue with their template or with each other', () => {
    const { template, copy } = hosts();
    const a = reachable(copy());
    const b = reachable(copy());
    const t = reachable(template);
    expect(a.size).toBeGreaterThan(300); // the walk reached the libraries
    const shared = [...a].filter((o) => t.has(o) || b.has(o));
    expect(shared).toEqual([]);
  });

  it('give each copy its own standard files, writing to its own output', async () => {
    const { copy } = hosts();
    const first = copy();
    const second = copy();
    expect(first.stdFiles.stdout).not.toBe(second.stdFiles.stdout);
    const out: string[] = [];
    first.configure({ ...first.environment, stdoutSink: (text) => out.push(`first ${text}`) });
    second.configure({ ...second.environment, stdoutSink: (text) => out.push(`second ${text}`) });
    first.stdFiles.stdout.write(new TextEncoder().encode('a'));
    second.stdFiles.stdout.write(new TextEncoder().encode('b'));
    expect(out).toEqual(['first a', 'second b']);
  });

  it('refuse a template holding a Lua function, which a copy could not make fresh', () => {
    const L = lauxlib.luaL_newstate();
    const source = new TextEncoder().encode('return 1');
    expect(lauxlib.luaL_loadbufferx(L, source, source.length, '=t', null)).toBe(lua.LUA_OK);
    lua.lua_setfield(L, lua.LUA_REGISTRYINDEX, 'chunk');
    expect(() => copyState(L, (data) => data)).toThrow(UncopyableStateError);
  });
});

describe('runs on copied states', () => {
  it('see every global, module and library, in pairs(_G) too', async () => {
    const { values } = testRuntime({
      modules: [[defineLuaModule({ name: 'm', description: 'test', functions: { f: fn() } }), { f: () => 1 }]],
    });
    // A module's table is made at its first use (host.ts): listed from then on.
    const [names] = await values(`
      local used = m
      local names = {}
      for k in pairs(_G) do names[#names + 1] = k end
      table.sort(names)
      return table.concat(names, " ")`);
    for (const name of ['m', 'string', 'io', 'os', 'math', 'coroutine', 'package', 'print', 'pcall', '_G', 'dry_run'])
      expect((names as string).split(' ')).toContain(name);
    expect(await values('return m.f(), io.write == io.write, _G._G == _G, package.loaded.string == string')).toEqual([
      1,
      true,
      true,
      true,
    ]);
  });

  it('let a script replace a module global for itself only', async () => {
    const { values } = testRuntime({
      poolSize: 0,
      modules: [[defineLuaModule({ name: 'm', description: 'test', functions: { f: fn() } }), { f: () => 1 }]],
    });
    expect(await values('m = { f = function() return "mine" end } return m.f()')).toEqual(['mine']);
    expect(await values('m = nil return m')).toEqual([null]);
    // Its own metatable on _G: the modules are made first, and stay reachable.
    expect(await values('setmetatable(_G, {}) return m.f(), getmetatable(_G) ~= nil')).toEqual([1, true]);
    expect(await values('return m.f()')).toEqual([1]);
  });

  it('keep nothing a script changed anywhere in its state, the registry and metatables included', async () => {
    const { values } = testRuntime({ poolSize: 0 });
    await values(`
      leaked = "yes"
      setmetatable(_G, { __index = function() return "from meta" end })
      string.upper = nil
      getmetatable("").__index = { len = function() return -1 end }
      io.write = nil
      os.getenv = function() return "mine" end
      coroutine.wrap = nil
      debug.getregistry().mark = true
      debug.getregistry()._LOADED.string = nil
      getmetatable(io.stdout).__index.write = nil
      package.path = "/nowhere/?.lua"
      package.preload.mine = function() return 1 end
    `);
    expect(
      await values(`
        return leaked, getmetatable(_G), type(string.upper), ("abc"):len(), type(io.write), os.getenv("NO_SUCH_VAR_X"),
          type(coroutine.wrap), debug.getregistry().mark, package.loaded.string == string,
          type(io.stdout.write), package.path ~= "/nowhere/?.lua", package.preload.mine`),
    ).toEqual([null, null, 'function', 3, 'function', null, 'function', null, true, 'function', true, null]);
  });

  it('do not share math.randomseed: a seed set by one run draws nothing in another', async () => {
    const { values } = testRuntime();
    const seeded = 'math.randomseed(42) return math.random(1, 1000000000), math.random(1, 1000000000)';
    const [a1, a2] = await values(seeded);
    // The same seed gives the same numbers, in every state: the generator is fengari's.
    expect(await values(seeded)).toEqual([a1, a2]);
    // A run that seeds and stops after one draw leaves nothing for the next to continue from.
    await values('math.randomseed(42) return math.random(1, 1000000000)');
    const [next] = await values('return math.random(1, 1000000000)');
    expect(next).not.toBe(a2);
    expect(await values('return math.random(3, 3), math.random() < 1, pcall(math.random, 2, 1)')).toEqual([
      3,
      true,
      false,
      "bad argument #1 to 'math.random' (interval is empty)",
    ]);
  });
});
