import fengari, { type LuaJsFunction, type LuaState } from 'fengari';
import { STOP, SLICE, hostOf, type Host } from './host.js';
import { concatBytes, luaString } from './lua-strings.js';

const { lua, lauxlib } = fengari;

const TAB = luaString('\t');
const NEWLINE = luaString('\n');

/**
 * What the runtime changes in the base, coroutine, debug and package libraries:
 * - `print` writes to the script's stdout (the task log), not the process's;
 * - `pcall`/`xpcall`/`coroutine.resume` do not catch the error that stops a script (timeout);
 * - coroutines work while something inside them waits for JavaScript or is out of time slice:
 *   that yield is passed up to the host and the inner coroutine resumed when the host resumes;
 * - the script's main chunk behaves as the main thread (`coroutine.isyieldable()` is false there);
 * - `collectgarbage` answers instead of failing (fengari leaves collection to JavaScript);
 * - `debug.debug` (blocks the process on stdin), `debug.sethook` (the hook is the runtime's),
 *   `package.loadlib` and loading JavaScript files through `require` are not available;
 * - `math.randomseed` seeds this state's generator only (fengari's is one for the process).
 * The functions find their host from the state they are called in (`hostOf`), so that states
 * copied from a template share them (see state-copy.ts).
 */
export function installBaseLibrary(L: LuaState): void {
  setGlobalFunctions(L, {
    print: (L1) => print(hostOf(L1), L1),
    pcall: (L1) => pcall(hostOf(L1), L1),
    xpcall: (L1) => xpcall(hostOf(L1), L1),
    collectgarbage,
  });
  installCoroutine(L);
  installRandom(L);

  lua.lua_getglobal(L, luaString('debug'));
  lua.lua_pushjsfunction(L, (L1) =>
    hostOf(L1).raise(L1, 'debug.debug is not available in a task (it would block the runner)'),
  );
  lua.lua_setfield(L, -2, luaString('debug'));
  // A thread has one hook, and the runtime's keeps scripts fair and stoppable.
  lua.lua_pushjsfunction(L, (L1) =>
    hostOf(L1).raise(
      L1,
      'debug.sethook is not available in a task (the runtime uses the hook for time slices and timeouts)',
    ),
  );
  lua.lua_setfield(L, -2, luaString('sethook'));
  lua.lua_pop(L, 1);

  lua.lua_getglobal(L, luaString('package'));
  lua.lua_pushjsfunction(L, (L1) => hostOf(L1).raise(L1, 'package.loadlib is not available in a task'));
  lua.lua_setfield(L, -2, luaString('loadlib'));
  // Keep the preload and Lua-file searchers; fengari's 3rd and 4th load JavaScript into the runner.
  lua.lua_getfield(L, -1, luaString('searchers'));
  lua.lua_pushnil(L);
  lua.lua_rawseti(L, -2, 4);
  lua.lua_pushnil(L);
  lua.lua_rawseti(L, -2, 3);
  lua.lua_pop(L, 1);
  lua.lua_pushnil(L);
  lua.lua_setfield(L, -2, luaString('jspath'));
  lua.lua_pop(L, 1);
}

const LUA_MAXINTEGER = 2147483647; // fengari's integers are 32-bit

/**
 * fengari's math.random and math.randomseed, with the generator's state in the Host instead of a
 * variable of fengari's module: there, one script's randomseed set the numbers every other script
 * in the process drew. Same generator (glibc's LCG), same results for the same seed.
 */
function installRandom(L: LuaState): void {
  const next = (host: Host): number => {
    host.randomState = (1103515245 * (host.randomState as number) + 12345) & 0x7fffffff;
    return host.randomState;
  };
  lua.lua_getglobal(L, luaString('math'));
  lauxlib.luaL_setfuncs(
    L,
    {
      random: (L1) => {
        const host = hostOf(L1);
        // Math.random until randomseed is called, as fengari does.
        let r = host.randomState === undefined ? Math.random() : next(host) / 0x80000000;
        let low: number;
        let up: number;
        switch (lua.lua_gettop(L1)) {
          case 0:
            lua.lua_pushnumber(L1, r);
            return 1;
          case 1:
            low = 1;
            up = lauxlib.luaL_checkinteger(L1, 1);
            break;
          case 2:
            low = lauxlib.luaL_checkinteger(L1, 1);
            up = lauxlib.luaL_checkinteger(L1, 2);
            break;
          default:
            return lauxlib.luaL_error(L1, luaString('wrong number of arguments'));
        }
        if (!(low <= up)) lauxlib.luaL_argerror(L1, 1, luaString('interval is empty'));
        if (!(low >= 0 || up <= LUA_MAXINTEGER + low)) lauxlib.luaL_argerror(L1, 1, luaString('interval too large'));
        r *= up - low + 1;
        lua.lua_pushinteger(L1, Math.floor(r) + low);
        return 1;
      },
      randomseed: (L1) => {
        const host = hostOf(L1);
        host.randomState = lauxlib.luaL_checknumber(L1, 1) | 0;
        if (host.randomState === 0) host.randomState = 1;
        next(host); // discards the first value, as fengari does
        return 0;
      },
    },
    0,
  );
  lua.lua_pop(L, 1);
}

function setGlobalFunctions(L: LuaState, functions: Record<string, LuaJsFunction>): void {
  lua.lua_pushglobaltable(L);
  lauxlib.luaL_setfuncs(L, functions, 0);
  lua.lua_pop(L, 1);
}

function print(host: Host, L: LuaState): number {
  const n = lua.lua_gettop(L);
  const parts: Uint8Array[] = [];
  for (let i = 1; i <= n; i++) {
    if (i > 1) parts.push(TAB);
    parts.push(lauxlib.luaL_tolstring(L, i));
    lua.lua_pop(L, 1);
  }
  parts.push(NEWLINE);
  host.stdout.write(concatBytes(parts));
  return 0;
}

/**
 * Lua limits nested C calls (200), pcall included, by counting them on the C stack. A resume
 * restarts that count, and a script yields at every time slice, so recursion through pcall would
 * never reach the limit: `local function f() return pcall(f) end` would dig until memory runs out.
 * The runtime counts each coroutine's open pcalls itself. Its limit sits below fengari's own (200
 * nested calls, "JS stack overflow"), which counts from the last resume: whichever fired first would
 * otherwise depend on whether a time slice happened to end during the recursion.
 */
const MAX_NESTED_PCALLS = 180;
/** Open pcalls of a coroutine, on its lua_State object (not a WeakMap: see host.ts, HOST). */
const OPEN_PCALLS = Symbol('runner.openPcalls');
type PcallCounted = { [OPEN_PCALLS]?: number };

function enterPcall(host: Host, L: LuaState): void {
  const counted = L as unknown as PcallCounted;
  const depth = (counted[OPEN_PCALLS] ?? 0) + 1;
  if (depth > MAX_NESTED_PCALLS) host.raise(L, `stack overflow (more than ${MAX_NESTED_PCALLS} nested pcalls)`);
  counted[OPEN_PCALLS] = depth;
}

/** As Lua 5.3's, except that the error stopping the script is passed on, not returned. */
function finishPcall(host: Host, L: LuaState, status: number, extra: number): number {
  const counted = L as unknown as PcallCounted;
  counted[OPEN_PCALLS] = (counted[OPEN_PCALLS] ?? 1) - 1;
  if (status !== lua.LUA_OK && status !== lua.LUA_YIELD) {
    if (host.stopping()) return lua.lua_error(L);
    lua.lua_pushboolean(L, false);
    lua.lua_pushvalue(L, -2);
    return 2;
  }
  return lua.lua_gettop(L) - extra;
}

function pcall(host: Host, L: LuaState): number {
  lauxlib.luaL_checkany(L, 1);
  enterPcall(host, L);
  lua.lua_pushboolean(L, true);
  lua.lua_insert(L, 1);
  const k = (L1: LuaState, status: number, extra: number) => finishPcall(host, L1, status, extra);
  const status = lua.lua_pcallk(L, lua.lua_gettop(L) - 2, lua.LUA_MULTRET, 0, 0, k);
  return finishPcall(host, L, status, 0);
}

function xpcall(host: Host, L: LuaState): number {
  const n = lua.lua_gettop(L);
  lauxlib.luaL_checktype(L, 2, lua.LUA_TFUNCTION);
  enterPcall(host, L);
  lua.lua_pushboolean(L, true);
  lua.lua_pushvalue(L, 1);
  lua.lua_rotate(L, 3, 2);
  const k = (L1: LuaState, status: number, extra: number) => finishPcall(host, L1, status, extra);
  const status = lua.lua_pcallk(L, n - 2, lua.LUA_MULTRET, 2, 2, k);
  return finishPcall(host, L, status, 2);
}

const GC_OPTIONS = ['stop', 'restart', 'collect', 'count', 'step', 'setpause', 'setstepmul', 'isrunning'].map((o) =>
  luaString(o),
);

function collectgarbage(L: LuaState): number {
  const option = lauxlib.luaL_checkoption(L, 1, 'collect', GC_OPTIONS);
  lauxlib.luaL_optinteger(L, 2, 0);
  switch (option) {
    case 3: // count: kilobytes in use, as a float
      lua.lua_pushnumber(L, process.memoryUsage().heapUsed / 1024);
      return 1;
    case 4: // step: "finished a cycle"
    case 7: // isrunning
      lua.lua_pushboolean(L, true);
      return 1;
    case 5: // setpause: the previous value
      lua.lua_pushinteger(L, 200);
      return 1;
    case 6: // setstepmul
      lua.lua_pushinteger(L, 100);
      return 1;
    default:
      lua.lua_pushinteger(L, 0);
      return 1;
  }
}

interface ResumeContext {
  co: LuaState;
  wrap: boolean;
}

function installCoroutine(L: LuaState): void {
  lua.lua_getglobal(L, luaString('coroutine'));
  lua.lua_getfield(L, -1, luaString('status'));
  const originalStatus = lua.lua_tocfunction(L, -1)!;
  lua.lua_pop(L, 1);
  lua.lua_getfield(L, -1, luaString('yield'));
  const originalYield = lua.lua_tocfunction(L, -1)!;
  lua.lua_pop(L, 1);

  const getco = (L1: LuaState): LuaState => {
    const co = lua.lua_tothread(L1, 1);
    if (co === null) lauxlib.luaL_argerror(L1, 1, luaString('coroutine expected'));
    return co!;
  };

  const continueResume = (L1: LuaState, _status: number, ctx: ResumeContext): number => {
    const host = hostOf(L1);
    host.suspendedByHost.delete(ctx.co);
    return resumeAndReport(host, L1, ctx.co, 0, ctx.wrap, continueResume);
  };

  const auxwrap: LuaJsFunction = (L1) => {
    const co = lua.lua_tothread(L1, lua.lua_upvalueindex(1))!;
    return startResume(hostOf(L1), L1, co, lua.lua_gettop(L1), true, continueResume);
  };

  lauxlib.luaL_setfuncs(
    L,
    {
      resume: (L1) => {
        const co = getco(L1);
        return startResume(hostOf(L1), L1, co, lua.lua_gettop(L1) - 1, false, continueResume);
      },
      wrap: (L1) => {
        lauxlib.luaL_checktype(L1, 1, lua.LUA_TFUNCTION);
        const co = lua.lua_newthread(L1);
        lua.lua_pushvalue(L1, 1);
        lua.lua_xmove(L1, co, 1);
        lua.lua_pushcclosure(L1, auxwrap, 1);
        return 1;
      },
      status: (L1) => {
        const co = getco(L1);
        if (hostOf(L1).suspendedByHost.has(co)) {
          lua.lua_pushstring(L1, luaString('normal'));
          return 1;
        }
        return originalStatus(L1);
      },
      // The host's coroutines stand for the main thread the script would have under `lua`.
      isyieldable: (L1) => {
        lua.lua_pushboolean(L1, !hostOf(L1).taskThreads.has(L1) && lua.lua_isyieldable(L1));
        return 1;
      },
      running: (L1) => {
        lua.lua_pushthread(L1);
        lua.lua_pushboolean(L1, hostOf(L1).taskThreads.has(L1));
        return 2;
      },
      yield: (L1) => {
        const host = hostOf(L1);
        if (host.taskThreads.has(L1)) return host.raise(L1, 'attempt to yield from outside a coroutine', false);
        return originalYield(L1);
      },
    },
    0,
  );
  lua.lua_pop(L, 1);
}

type Continuation = (L: LuaState, status: number, ctx: ResumeContext) => number;

function startResume(host: Host, L: LuaState, co: LuaState, narg: number, wrap: boolean, k: Continuation): number {
  if (host.suspendedByHost.has(co)) return reportError(L, luaString('cannot resume non-suspended coroutine'), wrap);
  if (!lua.lua_checkstack(co, narg)) return reportError(L, luaString('too many arguments to resume'), wrap);
  if (lua.lua_status(co) === lua.LUA_OK && lua.lua_gettop(co) === 0) {
    return reportError(L, luaString('cannot resume dead coroutine'), wrap);
  }
  lua.lua_xmove(L, co, narg);
  return resumeAndReport(host, L, co, narg, wrap, k);
}

/**
 * Resumes `co` as coroutine.resume/wrap do. When `co` yields to the host rather than to the script
 * (it waits for a promise, its slice is spent, its script is stopping), the yield goes on up: this
 * coroutine yields too, and resumes `co` when the host resumes it.
 */
function resumeAndReport(host: Host, L: LuaState, co: LuaState, narg: number, wrap: boolean, k: Continuation): number {
  let status = lua.lua_resume(co, L, narg);
  while (status === lua.LUA_YIELD && host.pendingYield !== null) {
    if (lua.lua_isyieldable(L)) {
      host.suspendedByHost.add(co);
      return lua.lua_yieldk(L, 0, { co, wrap }, k);
    }
    // This coroutine cannot yield (resume was called from a sort comparator or the like).
    const reason = host.pendingYield;
    host.pendingYield = null;
    if (reason === SLICE) {
      status = lua.lua_resume(co, L, 0);
      continue;
    }
    if (reason === STOP) return host.raise(L, host.running?.exec.stopError?.message ?? 'script stopped', false);
    Promise.resolve(reason.promise).then(undefined, () => {});
    return host.raise(L, `${reason.what} has to wait, which is not possible in a coroutine resumed from here`);
  }
  if (status === lua.LUA_OK || status === lua.LUA_YIELD) {
    const nres = lua.lua_gettop(co);
    if (!lua.lua_checkstack(L, nres + 1)) {
      lua.lua_pop(co, nres);
      return reportError(L, luaString('too many results to resume'), wrap);
    }
    lua.lua_xmove(co, L, nres);
    if (wrap) return nres;
    lua.lua_pushboolean(L, true);
    lua.lua_insert(L, -(nres + 1));
    return nres + 1;
  }
  lua.lua_xmove(co, L, 1);
  if (host.stopping()) return lua.lua_error(L);
  if (wrap) {
    if (lua.lua_type(L, -1) === lua.LUA_TSTRING) {
      lauxlib.luaL_where(L, 1);
      lua.lua_insert(L, -2);
      lua.lua_concat(L, 2);
    }
    return lua.lua_error(L);
  }
  lua.lua_pushboolean(L, false);
  lua.lua_insert(L, -2);
  return 2;
}

function reportError(L: LuaState, message: Uint8Array, wrap: boolean): number {
  if (wrap) {
    lauxlib.luaL_where(L, 1);
    lua.lua_pushstring(L, message);
    lua.lua_concat(L, 2);
    return lua.lua_error(L);
  }
  lua.lua_pushboolean(L, false);
  lua.lua_pushstring(L, message);
  return 2;
}
