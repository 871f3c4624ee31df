// The io library. fengari's is a stub (no io.open, no reading), so the runtime supplies all of it,
// following Lua 5.3's liolib.c. Files use blocking fs calls on purpose: they are local and short,
// and a file handle must work where a coroutine cannot wait (a sort comparator, a __tostring).
// Commands (io.popen) are the exception: they may run long, so they wait without blocking.
import { openSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import fengari, { type LuaJsFunction, type LuaState } from 'fengari';
import { runShell } from './commands.js';
import { hostOf, type Host } from './host.js';
import { formatG14, jsString, luaString } from './lua-strings.js';

const { lua, lauxlib } = fengari;

const FILE_HANDLE = luaString('FILE*');
const IO_INPUT = luaString('_IO_input');
const IO_OUTPUT = luaString('_IO_output');
/** C's L_MAXLENNUM: the longest numeral `read("n")` accepts. */
const MAX_NUMERAL = 200;

import {
  CommandInputBackend,
  FdBackend,
  MemoryBackend,
  StreamBackend,
  describeSystemError,
  pushExecResult,
  pushFileError,
  pushTrue,
} from './io-backends.js';
import { LuaFile, type ReadFormat } from './lua-file.js';

export { pushExecResult, pushFileError } from './io-backends.js';
export type { LuaFile } from './lua-file.js';
/** A state's io.stdin, io.stdout and io.stderr. */
export interface StdFiles {
  stdin: LuaFile;
  stdout: LuaFile;
  stderr: LuaFile;
}

/** The standard files of `host`: its environment's stdin, its stdout and stderr streams. */
export function createStdFiles(host: Host): StdFiles {
  return {
    stdin: new LuaFile(new MemoryBackend(() => host.environment.stdin), true),
    stdout: new LuaFile(new StreamBackend((data) => host.stdout.write(data)), true),
    stderr: new LuaFile(new StreamBackend((data) => host.stderr.write(data)), true),
  };
}

/**
 * Installs the io library in `L`, with `std` as its standard files. The functions find their host
 * from the state they are called in (`hostOf`), so that states copied from a template share them;
 * a copy's standard files are its own host's (see Host).
 */
export function installIoLibrary(L: LuaState, std: StdFiles): void {
  const { stdin, stdout, stderr } = std;

  const pushFile = (L1: LuaState, file: LuaFile): void => {
    const userdata = lua.lua_newuserdata(L1);
    userdata.file = file;
    lauxlib.luaL_setmetatable(L1, FILE_HANDLE);
  };

  const toFile = (L1: LuaState, arg = 1): LuaFile => {
    const file = (lauxlib.luaL_checkudata(L1, arg, FILE_HANDLE) as { file: LuaFile }).file;
    if (file.closed) lauxlib.luaL_error(L1, luaString('attempt to use a closed file'));
    return file;
  };

  /** Opens a file for the script running in `L1`; throws the fs error. */
  const openFile = (L1: LuaState, name: string, mode: string): LuaFile => {
    const host = hostOf(L1);
    const flags = mode.replace(/b/g, '');
    const fd = openSync(resolve(host.environment.cwd, name), flags);
    const file = new LuaFile(new FdBackend(fd, flags.startsWith('a')));
    host.files.add(file);
    return file;
  };

  /** opencheckfile: opens or raises "cannot open file 'x' (reason)". */
  const openOrRaise = (L1: LuaState, name: string, mode: string): void => {
    try {
      pushFile(L1, openFile(L1, name, mode));
    } catch (error) {
      hostOf(L1).raise(L1, `cannot open file '${name}' (${describeSystemError(error)})`);
    }
  };

  const closeFile = (L1: LuaState, file: LuaFile): number => {
    if (file.standard) {
      lua.lua_pushnil(L1);
      lua.lua_pushstring(L1, luaString('cannot close standard file'));
      return 2;
    }
    file.closed = true;
    hostOf(L1).files.delete(file);
    return file.backend.close(L1);
  };

  const ioFile = (L1: LuaState, key: Uint8Array): LuaFile => {
    lua.lua_getfield(L1, lua.LUA_REGISTRYINDEX, key);
    const file = (lua.lua_touserdata(L1, -1) as { file: LuaFile }).file;
    if (file.closed) hostOf(L1).raise(L1, `standard ${key === IO_INPUT ? 'input' : 'output'} file is closed`);
    return file;
  };

  const parseFormats = (L1: LuaState, first: number, last: number): ReadFormat[] => {
    const formats: ReadFormat[] = [];
    for (let i = first; i <= last; i++) {
      if (lua.lua_type(L1, i) === lua.LUA_TNUMBER) {
        formats.push(lauxlib.luaL_checkinteger(L1, i));
        continue;
      }
      const spec = jsString(lauxlib.luaL_checkstring(L1, i));
      const letter = spec.startsWith('*') ? spec[1] : spec[0];
      if (letter !== 'n' && letter !== 'l' && letter !== 'L' && letter !== 'a')
        lauxlib.luaL_argerror(L1, i, luaString('invalid format'));
      formats.push(letter as ReadFormat);
    }
    return formats;
  };

  const readNumber = (L1: LuaState, file: LuaFile): boolean => {
    let text = '';
    let c: number;
    do c = file.getc();
    while (c === 32 || (c >= 9 && c <= 13));
    const accept = (chars: string): boolean => {
      if (c < 0 || !chars.includes(String.fromCharCode(c)) || text.length >= MAX_NUMERAL) return false;
      text += String.fromCharCode(c);
      c = file.getc();
      return true;
    };
    const digits = (hex: boolean): number => {
      let count = 0;
      while (c >= 0 && (hex ? /[0-9a-fA-F]/ : /[0-9]/).test(String.fromCharCode(c)) && text.length < MAX_NUMERAL) {
        text += String.fromCharCode(c);
        c = file.getc();
        count++;
      }
      return count;
    };
    accept('-+');
    let count = 0;
    let hex = false;
    if (accept('0')) {
      if (accept('xX')) hex = true;
      else count = 1;
    }
    count += digits(hex);
    if (accept('.')) count += digits(hex);
    if (count > 0 && accept(hex ? 'pP' : 'eE')) {
      accept('-+');
      digits(false);
    }
    if (c >= 0) file.ungetc();
    if (lua.lua_stringtonumber(L1, luaString(text)) !== 0) return true;
    lua.lua_pushnil(L1);
    return false;
  };

  /** g_read: pushes one result per format; a failed read ends the list with nil. */
  const readFormats = (L1: LuaState, file: LuaFile, formats: readonly ReadFormat[]): number => {
    const list = formats.length === 0 ? (['l'] as const) : formats;
    lauxlib.luaL_checkstack(L1, list.length + 20, luaString('too many arguments'));
    let n = 0;
    let success = true;
    try {
      for (const format of list) {
        if (!success) break;
        n++;
        if (typeof format === 'number') {
          if (format === 0) {
            lua.lua_pushstring(L1, new Uint8Array(0));
            success = !file.atEof();
          } else {
            const bytes = file.readChars(format);
            if (bytes === null) lua.lua_pushnil(L1);
            else lua.lua_pushstring(L1, bytes);
            success = bytes !== null;
          }
          continue;
        }
        switch (format) {
          case 'n':
            success = readNumber(L1, file);
            break;
          case 'l':
          case 'L': {
            const line = file.readLine(format === 'L');
            if (line === null) lua.lua_pushstring(L1, new Uint8Array(0));
            else lua.lua_pushstring(L1, line);
            success = line !== null;
            break;
          }
          case 'a':
            lua.lua_pushstring(L1, file.readAll());
            break;
        }
      }
    } catch (error) {
      return pushFileError(L1, error);
    }
    if (!success) {
      lua.lua_pop(L1, 1);
      lua.lua_pushnil(L1);
    }
    return n;
  };

  /** g_write: arguments first..top-1 (the file is on top, and is the result). */
  const writeArgs = (L1: LuaState, file: LuaFile, first: number): number => {
    const last = lua.lua_gettop(L1) - 1;
    try {
      for (let i = first; i <= last; i++) {
        if (lua.lua_type(L1, i) === lua.LUA_TNUMBER) {
          const text = lua.lua_isinteger(L1, i) ? String(lua.lua_tointeger(L1, i)) : formatG14(lua.lua_tonumber(L1, i));
          file.write(luaString(text));
        } else {
          file.write(lauxlib.luaL_checklstring(L1, i));
        }
      }
    } catch (error) {
      return pushFileError(L1, error);
    }
    return 1;
  };

  const linesIterator = (file: LuaFile, formats: ReadFormat[], closeAtEnd: boolean): LuaJsFunction => {
    return (L1) => {
      if (file.closed) return lauxlib.luaL_error(L1, luaString('file is already closed'));
      lua.lua_settop(L1, 0);
      const n = readFormats(L1, file, formats);
      if (lua.lua_toboolean(L1, -n)) return n;
      if (n > 1) return hostOf(L1).raise(L1, jsString(lua.lua_tostring(L1, -n + 1) ?? new Uint8Array(0)), false);
      if (closeAtEnd) {
        file.closed = true;
        hostOf(L1).files.delete(file);
        file.backend.closeQuietly();
      }
      return 0;
    };
  };

  const popen = (L1: LuaState): number => {
    const command = jsString(lauxlib.luaL_checkstring(L1, 1));
    const mode = jsString(lauxlib.luaL_optstring(L1, 2, 'r')!);
    if (mode !== 'r' && mode !== 'w') lauxlib.luaL_argerror(L1, 2, luaString('invalid mode'));
    const host = hostOf(L1);
    const exec = host.running?.exec;
    if (exec === undefined) return host.raise(L1, 'io.popen cannot be called outside a running script');
    const env = host.environment;
    const run = (stdinBytes: Uint8Array | undefined, capture: boolean) =>
      runShell(command, {
        cwd: env.cwd,
        env: env.env,
        signal: exec.context.signal,
        stdin: stdinBytes,
        captureStdout: capture,
        onStdout: (chunk) => host.stdout.write(chunk),
        onStderr: (chunk) => host.stderr.write(chunk),
      });
    if (env.dryRun) {
      env.logger.info(`dry-run: not running io.popen command: ${command}`, { command });
      const skipped = (L2: LuaState) => pushExecResult(L2, { code: 0, signal: null });
      const file =
        mode === 'r'
          ? new LuaFile(new MemoryBackend(() => new Uint8Array(0), skipped))
          : new LuaFile(new CommandInputBackend(skipped));
      host.files.add(file);
      pushFile(L1, file);
      return 1;
    }
    if (mode === 'w') {
      const file = new LuaFile(
        new CommandInputBackend((L2, input) => host.suspend(L2, 'io.popen', run(input, false), pushExecResult)),
      );
      host.files.add(file);
      pushFile(L1, file);
      return 1;
    }
    return host.suspend(L1, 'io.popen', run(undefined, true), (L2, outcome) => {
      const output = outcome.stdout ?? new Uint8Array(0);
      const file = new LuaFile(
        new MemoryBackend(
          () => output,
          (L3) => pushExecResult(L3, outcome),
        ),
      );
      host.files.add(file);
      pushFile(L2, file);
      return 1;
    });
  };

  const io: Record<string, LuaJsFunction> = {
    open: (L1) => {
      const name = jsString(lauxlib.luaL_checkstring(L1, 1));
      const mode = jsString(lauxlib.luaL_optstring(L1, 2, 'r')!);
      if (!/^[rwa]\+?b*$/.test(mode)) lauxlib.luaL_argerror(L1, 2, luaString('invalid mode'));
      try {
        pushFile(L1, openFile(L1, name, mode));
        return 1;
      } catch (error) {
        return pushFileError(L1, error, name);
      }
    },
    close: (L1) => {
      if (lua.lua_isnone(L1, 1)) lua.lua_getfield(L1, lua.LUA_REGISTRYINDEX, IO_OUTPUT);
      return closeFile(L1, toFile(L1));
    },
    read: (L1) => {
      const formats = parseFormats(L1, 1, lua.lua_gettop(L1));
      const file = ioFile(L1, IO_INPUT);
      lua.lua_settop(L1, 0);
      return readFormats(L1, file, formats);
    },
    write: (L1) => writeArgs(L1, ioFile(L1, IO_OUTPUT), 1),
    lines: (L1) => {
      if (lua.lua_isnone(L1, 1)) lua.lua_pushnil(L1);
      if (lua.lua_isnil(L1, 1)) {
        const formats = parseFormats(L1, 2, lua.lua_gettop(L1));
        const file = ioFile(L1, IO_INPUT);
        lua.lua_pushjsfunction(L1, linesIterator(file, formats, false));
        return 1;
      }
      const name = jsString(lauxlib.luaL_checkstring(L1, 1));
      const formats = parseFormats(L1, 2, lua.lua_gettop(L1));
      let file: LuaFile;
      try {
        file = openFile(L1, name, 'r');
      } catch (error) {
        return hostOf(L1).raise(L1, `${name}: ${describeSystemError(error)}`);
      }
      lua.lua_pushjsfunction(L1, linesIterator(file, formats, true));
      return 1;
    },
    input: (L1) => selectDefault(L1, IO_INPUT, 'r'),
    output: (L1) => selectDefault(L1, IO_OUTPUT, 'w'),
    type: (L1) => {
      lauxlib.luaL_checkany(L1, 1);
      const userdata = lauxlib.luaL_testudata(L1, 1, FILE_HANDLE) as { file: LuaFile } | null;
      if (userdata === null) lua.lua_pushnil(L1);
      else lua.lua_pushstring(L1, luaString(userdata.file.closed ? 'closed file' : 'file'));
      return 1;
    },
    flush: (L1) => {
      ioFile(L1, IO_OUTPUT);
      return pushTrue(L1);
    },
    tmpfile: (L1) => {
      const path = join(tmpdir(), `lua_${randomBytes(6).toString('hex')}`);
      try {
        const fd = openSync(path, 'wx+');
        // Unlinked at once, as C's tmpfile(): it vanishes when closed.
        unlinkSync(path);
        const file = new LuaFile(new FdBackend(fd, false));
        hostOf(L1).files.add(file);
        pushFile(L1, file);
        return 1;
      } catch (error) {
        return pushFileError(L1, error);
      }
    },
    popen,
  };

  const selectDefault = (L1: LuaState, key: Uint8Array, mode: string): number => {
    if (!lua.lua_isnoneornil(L1, 1)) {
      if (lua.lua_type(L1, 1) === lua.LUA_TSTRING || lua.lua_type(L1, 1) === lua.LUA_TNUMBER) {
        openOrRaise(L1, jsString(lua.lua_tostring(L1, 1)!), mode);
      } else {
        toFile(L1);
        lua.lua_pushvalue(L1, 1);
      }
      lua.lua_setfield(L1, lua.LUA_REGISTRYINDEX, key);
    }
    lua.lua_getfield(L1, lua.LUA_REGISTRYINDEX, key);
    return 1;
  };

  const methods: Record<string, LuaJsFunction> = {
    close: (L1) => closeFile(L1, toFile(L1)),
    flush: (L1) => {
      toFile(L1);
      return pushTrue(L1);
    },
    lines: (L1) => {
      const file = toFile(L1);
      lua.lua_pushjsfunction(L1, linesIterator(file, parseFormats(L1, 2, lua.lua_gettop(L1)), false));
      return 1;
    },
    read: (L1) => {
      const file = toFile(L1);
      const formats = parseFormats(L1, 2, lua.lua_gettop(L1));
      lua.lua_settop(L1, 0);
      return readFormats(L1, file, formats);
    },
    seek: (L1) => {
      const file = toFile(L1);
      const whence = (['set', 'cur', 'end'] as const)[
        lauxlib.luaL_checkoption(L1, 2, 'cur', [luaString('set'), luaString('cur'), luaString('end')])
      ];
      const offset = lauxlib.luaL_optinteger(L1, 3, 0);
      try {
        lua.lua_pushinteger(L1, file.seek(whence, offset));
        return 1;
      } catch (error) {
        return pushFileError(L1, error);
      }
    },
    setvbuf: (L1) => {
      toFile(L1);
      lauxlib.luaL_checkoption(L1, 2, null, [luaString('no'), luaString('full'), luaString('line')]);
      return pushTrue(L1);
    },
    write: (L1) => {
      const file = toFile(L1);
      lua.lua_pushvalue(L1, 1);
      return writeArgs(L1, file, 2);
    },
    __tostring: (L1) => {
      const file = (lauxlib.luaL_checkudata(L1, 1, FILE_HANDLE) as { file: LuaFile }).file;
      lua.lua_pushstring(
        L1,
        luaString(file.closed ? 'file (closed)' : `file (0x${file.id.toString(16).padStart(8, '0')})`),
      );
      return 1;
    },
  };

  lauxlib.luaL_requiref(
    L,
    luaString('io'),
    (L1) => {
      lua.lua_createtable(L1, 0, Object.keys(io).length + 3);
      lauxlib.luaL_setfuncs(L1, io, 0);
      lauxlib.luaL_newmetatable(L1, FILE_HANDLE);
      lauxlib.luaL_setfuncs(L1, methods, 0);
      lua.lua_pushvalue(L1, -1);
      lua.lua_setfield(L1, -2, luaString('__index'));
      lua.lua_pop(L1, 1);
      for (const [name, file, key] of [
        ['stdin', stdin, IO_INPUT],
        ['stdout', stdout, IO_OUTPUT],
        ['stderr', stderr, null],
      ] as const) {
        pushFile(L1, file);
        if (key !== null) {
          lua.lua_pushvalue(L1, -1);
          lua.lua_setfield(L1, lua.LUA_REGISTRYINDEX, key);
        }
        lua.lua_setfield(L1, -2, luaString(name));
      }
      return 1;
    },
    1,
  );
  lua.lua_pop(L, 1);
}
