import { existsSync, readFileSync } from 'node:fs';
import { InvalidInputError, luaString, readLuaOptions, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';

/** Writes body to container/name unless it already holds it; `fn` names the Lua function for messages. */
export type ObjectWrite = (
  call: LuaCallContext,
  fn: string,
  opts: Record<string, LuaValue>,
  container: string,
  name: string,
  body: Buffer,
) => Promise<LuaValue>;

type Writer = (call: LuaCallContext, ...args: LuaValue[]) => Promise<LuaValue>;

/**
 * A storage service's two writing functions over its one compare-then-write: `put` takes the
 * content as text, `upload` a local file. `words` are what the service calls a container and an
 * object (bucket and key, container and name), for messages.
 */
export function objectWriters(
  names: { put: string; upload: string },
  words: [container: string, object: string],
  options: readonly string[],
  write: ObjectWrite,
): { put: Writer; upload: Writer } {
  const place = (fn: string, container: LuaValue, name: LuaValue): [string, string] => [
    luaString(fn, `argument 1 (${words[0]})`, container),
    luaString(fn, `argument 2 (${words[1]})`, name),
  ];
  return {
    put: (call, container, name, body, opts) => {
      const fn = names.put;
      if (typeof body !== 'string') throw new InvalidInputError(`${fn}: argument 3 (body) must be a string`);
      const o = readLuaOptions(fn, 4, opts, options);
      return write(call, fn, o, ...place(fn, container, name), Buffer.from(body, 'utf8'));
    },
    upload: (call, container, name, pathArg, opts) => {
      const fn = names.upload;
      const path = luaString(fn, 'argument 3 (path)', pathArg);
      if (!existsSync(path)) throw new InvalidInputError(`${fn}: ${path} does not exist`);
      const o = readLuaOptions(fn, 4, opts, options);
      return write(call, fn, o, ...place(fn, container, name), readFileSync(path));
    },
  };
}
