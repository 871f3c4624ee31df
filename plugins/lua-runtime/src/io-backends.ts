// Where the io library's files keep their bytes (a file descriptor, memory, a stream, a command's
// stdin), and the C library's error reporting that Lua shows (strerror, errno, luaL_fileresult).
import { closeSync, fstatSync, readSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import fengari, { type LuaState } from 'fengari';
import { signalNumber, type CommandOutcome } from './commands.js';
import { concatBytes, luaString } from './lua-strings.js';

const { lua } = fengari;

/** Where a file's bytes live. Methods throw Node-style errors (with `code`), reported as Lua does. */
export interface Backend {
  readonly seekable: boolean;
  read(buffer: Uint8Array, length: number, position: number): number;
  /** Writes at `position` (ignored when appending); returns the position after the write. */
  write(data: Uint8Array, position: number): number;
  size(): number;
  /** Pushes what `file:close()` returns. */
  close(L: LuaState): number;
  closeQuietly(): void;
}

export function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(STRERROR[code] ?? code), { code });
}

const STRERROR: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EEXIST: 'File exists',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  ENOTEMPTY: 'Directory not empty',
  EBADF: 'Bad file descriptor',
  EINVAL: 'Invalid argument',
  ESPIPE: 'Illegal seek',
  EROFS: 'Read-only file system',
  EMFILE: 'Too many open files',
  ENOSPC: 'No space left on device',
  EXDEV: 'Invalid cross-device link',
  EBUSY: 'Device or resource busy',
  ENAMETOOLONG: 'File name too long',
  ELOOP: 'Too many levels of symbolic links',
};

/** The C library's text for an error (`strerror`), which Lua shows. */
export function describeSystemError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && STRERROR[code] !== undefined) return STRERROR[code];
  return error instanceof Error ? error.message : String(error);
}

export function errnoOf(error: unknown): number {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined ? 0 : ((constants.errno as Record<string, number>)[code] ?? 0);
}

/** luaL_fileresult for a failure: nil, "<name>: <strerror>", errno. */
export function pushFileError(L: LuaState, error: unknown, name?: string): number {
  lua.lua_pushnil(L);
  lua.lua_pushstring(
    L,
    luaString(name === undefined ? describeSystemError(error) : `${name}: ${describeSystemError(error)}`),
  );
  lua.lua_pushinteger(L, errnoOf(error));
  return 3;
}

/** luaL_execresult: true|nil, "exit"|"signal", code. */
export function pushExecResult(L: LuaState, outcome: CommandOutcome): number {
  if (outcome.signal !== null) {
    lua.lua_pushnil(L);
    lua.lua_pushstring(L, luaString('signal'));
    lua.lua_pushinteger(L, signalNumber(outcome.signal));
  } else {
    if (outcome.code === 0) lua.lua_pushboolean(L, true);
    else lua.lua_pushnil(L);
    lua.lua_pushstring(L, luaString('exit'));
    lua.lua_pushinteger(L, outcome.code ?? 0);
  }
  return 3;
}

export function pushTrue(L: LuaState): number {
  lua.lua_pushboolean(L, true);
  return 1;
}

export class FdBackend implements Backend {
  readonly seekable = true;
  readonly #fd: number;
  readonly #append: boolean;
  #open = true;

  constructor(fd: number, append: boolean) {
    this.#fd = fd;
    this.#append = append;
  }

  read(buffer: Uint8Array, length: number, position: number): number {
    return readSync(this.#fd, buffer, 0, length, position);
  }

  write(data: Uint8Array, position: number): number {
    if (this.#append) {
      writeSync(this.#fd, data, 0, data.length, null);
      return fstatSync(this.#fd).size;
    }
    let written = 0;
    while (written < data.length)
      written += writeSync(this.#fd, data, written, data.length - written, position + written);
    return position + written;
  }

  size(): number {
    return fstatSync(this.#fd).size;
  }

  close(L: LuaState): number {
    this.#open = false;
    try {
      closeSync(this.#fd);
    } catch (error) {
      return pushFileError(L, error);
    }
    return pushTrue(L);
  }

  closeQuietly(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      closeSync(this.#fd);
    } catch {}
  }
}

/** Bytes held in memory: stdin, or what a command run by io.popen("...", "r") printed. */
export class MemoryBackend implements Backend {
  readonly seekable = true;
  readonly #bytes: () => Uint8Array;
  readonly #onClose: (L: LuaState) => number;

  constructor(bytes: () => Uint8Array, onClose: (L: LuaState) => number = pushTrue) {
    this.#bytes = bytes;
    this.#onClose = onClose;
  }

  read(buffer: Uint8Array, length: number, position: number): number {
    const bytes = this.#bytes();
    const n = Math.max(0, Math.min(length, bytes.length - position));
    buffer.set(bytes.subarray(position, position + n), 0);
    return n;
  }

  write(): number {
    throw systemError('EBADF');
  }

  size(): number {
    return this.#bytes().length;
  }

  close(L: LuaState): number {
    return this.#onClose(L);
  }

  closeQuietly(): void {}
}

/** stdout and stderr: writes go to the script's stream (the log, or a sink). */
export class StreamBackend implements Backend {
  readonly seekable = false;
  readonly #write: (data: Uint8Array) => void;

  constructor(write: (data: Uint8Array) => void) {
    this.#write = write;
  }

  read(): number {
    throw systemError('EBADF');
  }

  write(data: Uint8Array, position: number): number {
    this.#write(data);
    return position;
  }

  size(): number {
    throw systemError('ESPIPE');
  }

  close(L: LuaState): number {
    return pushTrue(L);
  }

  closeQuietly(): void {}
}

/** io.popen(cmd, "w"): collects what is written; the command runs, with it as stdin, on close. */
export class CommandInputBackend implements Backend {
  readonly seekable = false;
  readonly #parts: Uint8Array[] = [];
  readonly #run: (L: LuaState, stdin: Uint8Array) => number;

  constructor(run: (L: LuaState, stdin: Uint8Array) => number) {
    this.#run = run;
  }

  read(): number {
    throw systemError('EBADF');
  }

  write(data: Uint8Array, position: number): number {
    this.#parts.push(data.slice());
    return position;
  }

  size(): number {
    throw systemError('ESPIPE');
  }

  close(L: LuaState): number {
    return this.#run(L, concatBytes(this.#parts));
  }

  closeQuietly(): void {}
}
