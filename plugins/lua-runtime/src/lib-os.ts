// The os library: fengari's time, difftime and setlocale are kept. The functions fengari implements
// against the host process (exit, getenv, execute) are replaced by ones that respect the script's
// environment; remove/rename/tmpname resolve against the script's directory; date is rewritten
// (fengari's mishandles "!" formats).
import { closeSync, openSync, rmdirSync, renameSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import fengari, { type LuaState } from 'fengari';
import { runShell } from './commands.js';
import { hostOf } from './host.js';
import { pushExecResult, pushFileError } from './lib-io.js';
import { jsString, luaString } from './lua-strings.js';
import { brokenDown, InvalidConversionError, strftime } from './strftime.js';

const { lua, lauxlib } = fengari;

/**
 * The functions find their host from the state they are called in (`hostOf`), so that states
 * copied from a template share them (see state-copy.ts).
 */
export function installOsLibrary(L: LuaState): void {
  const path = (L1: LuaState, arg: number): { name: string; path: string } => {
    const name = jsString(lauxlib.luaL_checkstring(L1, arg));
    return { name, path: resolve(hostOf(L1).environment.cwd, name) };
  };

  lua.lua_getglobal(L, luaString('os'));
  lauxlib.luaL_setfuncs(
    L,
    {
      exit: (L1) =>
        hostOf(L1).raise(L1, 'os.exit cannot end the runner (return false to fail a task, error() to stop a script)'),

      date: (L1) => {
        let format = jsString(lauxlib.luaL_optstring(L1, 1, '%c')!);
        const time = lua.lua_isnoneornil(L1, 2) ? Date.now() : lauxlib.luaL_checkinteger(L1, 2) * 1000;
        const utc = format.startsWith('!');
        if (utc) format = format.slice(1);
        const t = brokenDown(new Date(time), utc);
        if (format === '*t') {
          lua.lua_createtable(L1, 0, 9);
          for (const [key, value] of [
            ['year', t.year],
            ['month', t.month],
            ['day', t.day],
            ['hour', t.hour],
            ['min', t.min],
            ['sec', t.sec],
            ['wday', t.wday + 1],
            ['yday', t.yday],
          ] as const) {
            lua.lua_pushinteger(L1, value);
            lua.lua_setfield(L1, -2, luaString(key));
          }
          lua.lua_pushboolean(L1, t.isdst);
          lua.lua_setfield(L1, -2, luaString('isdst'));
          return 1;
        }
        let text: string;
        try {
          text = strftime(format, t);
        } catch (error) {
          if (error instanceof InvalidConversionError) return lauxlib.luaL_argerror(L1, 1, luaString(error.message));
          throw error;
        }
        lua.lua_pushstring(L1, luaString(text));
        return 1;
      },

      getenv: (L1) => {
        const key = jsString(lauxlib.luaL_checkstring(L1, 1));
        const env = hostOf(L1).environment.env;
        const value = Object.prototype.hasOwnProperty.call(env, key) ? env[key] : undefined;
        if (value === undefined) lua.lua_pushnil(L1);
        else lua.lua_pushstring(L1, luaString(value));
        return 1;
      },

      // CPU time of the process, as C's clock(); fengari answers with the uptime.
      clock: (L1) => {
        const usage = process.cpuUsage();
        lua.lua_pushnumber(L1, (usage.user + usage.system) / 1e6);
        return 1;
      },

      remove: (L1) => {
        const { name, path: target } = path(L1, 1);
        try {
          unlinkSync(target);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // C's remove() also removes an empty directory.
          if (code !== 'EISDIR' && code !== 'EPERM') return pushFileError(L1, error, name);
          try {
            rmdirSync(target);
          } catch (dirError) {
            return pushFileError(L1, (dirError as NodeJS.ErrnoException).code === 'ENOTDIR' ? error : dirError, name);
          }
        }
        lua.lua_pushboolean(L1, true);
        return 1;
      },

      rename: (L1) => {
        const from = path(L1, 1);
        const to = path(L1, 2);
        try {
          renameSync(from.path, to.path);
        } catch (error) {
          return pushFileError(L1, error, from.name);
        }
        lua.lua_pushboolean(L1, true);
        return 1;
      },

      // Creates the file, as mkstemp() does for C's Lua, so that no one else can take the name.
      tmpname: (L1) => {
        for (let attempt = 0; attempt < 10; attempt++) {
          const name = join(tmpdir(), `lua_${randomBytes(6).toString('hex')}`);
          try {
            closeSync(openSync(name, 'wx', 0o600));
            lua.lua_pushstring(L1, luaString(name));
            return 1;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EEXIST') break;
          }
        }
        return hostOf(L1).raise(L1, 'unable to generate a unique filename');
      },

      // Runs through /bin/sh like C's system(), but without blocking other scripts; its output goes
      // to the script's stdout/stderr. In dry-run it runs nothing, like exec.run.
      execute: (L1) => {
        if (lua.lua_isnoneornil(L1, 1)) {
          lua.lua_pushboolean(L1, true);
          return 1;
        }
        const command = jsString(lauxlib.luaL_checkstring(L1, 1));
        const host = hostOf(L1);
        const exec = host.running?.exec;
        if (exec === undefined) return host.raise(L1, 'os.execute cannot be called outside a running script');
        const env = host.environment;
        if (env.dryRun) {
          env.logger.info(`dry-run: not running os.execute command: ${command}`, { command });
          return pushExecResult(L1, { code: 0, signal: null });
        }
        const outcome = runShell(command, {
          cwd: env.cwd,
          env: env.env,
          signal: exec.context.signal,
          captureStdout: false,
          onStdout: (chunk) => host.stdout.write(chunk),
          onStderr: (chunk) => host.stderr.write(chunk),
        });
        return host.suspend(L1, 'os.execute', outcome, pushExecResult);
      },
    },
    0,
  );
  lua.lua_pop(L, 1);
}
