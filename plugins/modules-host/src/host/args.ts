import { isLuaTable, luaType, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';

/** A string argument that must be there and not empty. */
export function requireString(fn: string, value: unknown, position: number, what = 'a string'): string {
  if (typeof value !== 'string' || value === '')
    throw new Error(
      `${fn}: argument ${position} must be ${what} (a non-empty string), got ${value === '' ? 'an empty string' : luaType(value)}`,
    );
  if (value.includes('\0')) throw new Error(`${fn}: argument ${position} contains a NUL byte`);
  return value;
}

/** One name or a list of them (`"curl"` or `{"curl", "jq"}`). */
export function stringList(fn: string, value: unknown, position: number): string[] {
  if (typeof value === 'string') return [requireString(fn, value, position)];
  if (Array.isArray(value) && value.length > 0) return value.map((v) => requireString(fn, v, position));
  throw new Error(`${fn}: argument ${position} must be a string or a non-empty list of strings, got ${luaType(value)}`);
}

/** An options table with only the named keys; nil and an empty table mean none. */
export function options<K extends string>(
  fn: string,
  value: unknown,
  position: number,
  known: readonly K[],
): Partial<Record<K, LuaValue>> {
  if (value === undefined || value === null) return {};
  if (!isLuaTable(value))
    throw new Error(`${fn}: argument ${position} must be a table of options, got ${luaType(value)}`);
  if (Array.isArray(value)) {
    if (value.length === 0) return {};
    throw new Error(`${fn}: argument ${position} must be a table with named options (${known.join(', ')})`);
  }
  for (const key of Object.keys(value))
    if (!(known as readonly string[]).includes(key))
      throw new Error(`${fn}: unknown option "${key}" (known: ${known.join(', ')})`);
  return value as Partial<Record<K, LuaValue>>;
}

export function optString(fn: string, name: string, value: LuaValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`${fn}: option ${name} must be a string, got ${luaType(value)}`);
  return value;
}

export function optBoolean(fn: string, name: string, value: LuaValue | undefined): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new Error(`${fn}: option ${name} must be a boolean, got ${luaType(value)}`);
  return value;
}

export type Change = Record<string, LuaValue>;

/**
 * The result of a function that may change the host, as file.* reports it: `changed` says whether
 * it changed something; in dry-run nothing is done, `changed` and `would_change` say whether it
 * would have, `skipped` is true and `note` says what it would do.
 */
export async function change(
  call: LuaCallContext,
  wouldChange: boolean,
  what: string,
  act: () => Promise<Change | void>,
  extra: Change = {},
): Promise<Change> {
  if (call.dryRun)
    return {
      ...extra,
      changed: wouldChange,
      would_change: wouldChange,
      skipped: true,
      note: wouldChange ? `dry-run: would ${what}` : 'dry-run: nothing to change',
    };
  if (!wouldChange) return { ...extra, changed: false };
  const more = await act();
  call.logger.info(what);
  return { ...extra, ...(more ?? {}), changed: true };
}
