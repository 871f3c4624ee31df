import { InvalidInputError, type LuaValue } from '@runner/plugin-sdk';

/** The Lua name of a value's type: messages speak the script author's language, not JavaScript's. */
export function luaType(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'object') {
    return (value as { kind?: unknown }).kind === 'lua-function' ? 'function' : 'table';
  }
  return typeof value;
}

/** `nil`, `number 644`, `string "abc"`: the type, and the value when it is short enough to help. */
export function describe(value: unknown): string {
  const type = luaType(value);
  if (type === 'string') {
    const text = value as string;
    return `string ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`;
  }
  if (type === 'number' || type === 'boolean') return `${type} ${String(value)}`;
  return type;
}

/** A named-options table, or `{}` for nil; unknown keys raise so that a typo (`timout`) is not ignored. */
export function readOptions(
  fn: string,
  position: number,
  value: LuaValue,
  known: readonly string[],
): Record<string, LuaValue> {
  if (value === null || value === undefined) return {};
  if (Array.isArray(value)) {
    if (value.length === 0) return {};
    throw new InvalidInputError(
      `${fn}: argument ${position} must be a table of named options (e.g. { timeout = "5s" }), got a list`,
    );
  }
  if (luaType(value) !== 'table') {
    throw new InvalidInputError(`${fn}: argument ${position} must be a table of options, got ${describe(value)}`);
  }
  const options = value as Record<string, LuaValue>;
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidInputError(`${fn}: unknown option "${key}" (known: ${known.join(', ')})`);
    }
  }
  return options;
}

/** An http or https URL given as a string. */
export function requireUrl(fn: string, position: number, value: LuaValue): URL {
  if (typeof value !== 'string') {
    throw new InvalidInputError(`${fn}: argument ${position} must be a URL string, got ${describe(value)}`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidInputError(`${fn}: argument ${position} ${JSON.stringify(value)} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(
      `${fn}: argument ${position} ${JSON.stringify(shownUrl(url))} is not an http or https URL`,
    );
  }
  return url;
}

/** The URL as messages and results show it: a password in it never reaches a log. */
export function shownUrl(url: URL): string {
  if (!url.password) return url.href;
  const copy = new URL(url.href);
  copy.password = '***';
  return copy.href;
}

/**
 * fetch refuses URLs with credentials (and repeats the password in its error): they move to an
 * Authorization header instead, unless the script set one. The URL is changed in place.
 */
export function moveCredentials(url: URL, headers: Headers): void {
  if (!url.username && !url.password) return;
  if (!headers.has('authorization')) {
    const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.set('authorization', `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`);
  }
  url.username = '';
  url.password = '';
}

export function requireString(fn: string, position: number, name: string, value: LuaValue): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidInputError(`${fn}: argument ${position} must be a ${name} string, got ${describe(value)}`);
  }
  return value;
}

/** A TCP port: an integer 1..65535, or a string of digits (Lua scripts often carry ports as strings). */
export function requirePort(fn: string, position: number, value: LuaValue): number {
  const port = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidInputError(`${fn}: argument ${position} must be a port number 1-65535, got ${describe(value)}`);
  }
  return port;
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration as the workflow language spells it: `<number><unit>` (ms, s, m, h, d) or a bare number
 * of seconds. Returns milliseconds; zero is refused because every duration here is a time limit or
 * an interval, and zero of either is a mistake.
 */
export function durationOption(fn: string, name: string, value: LuaValue, fallbackMs: number): number {
  if (value === null || value === undefined) return fallbackMs;
  let ms: number | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) {
    ms = Math.round(value * 1000);
  } else if (typeof value === 'string') {
    const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$/.exec(value);
    const factor = match ? (match[2] === '' ? UNIT_MS.s : UNIT_MS[match[2]]) : undefined;
    if (match && factor !== undefined) ms = Math.round(Number(match[1]) * factor);
  }
  if (ms === undefined || !Number.isSafeInteger(ms)) {
    throw new InvalidInputError(
      `${fn}: ${name} must be a duration such as "5s", "500ms" or a number of seconds, got ${describe(value)}`,
    );
  }
  if (ms <= 0) throw new InvalidInputError(`${fn}: ${name} must be longer than 0, got ${describe(value)}`);
  return ms;
}

/** Request headers from a `{ ["Name"] = "value" }` table; numbers and booleans are written as text. */
export function headersOption(fn: string, value: LuaValue): Headers {
  const headers = new Headers();
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return headers;
  if (luaType(value) !== 'table' || Array.isArray(value)) {
    throw new InvalidInputError(
      `${fn}: headers must be a table of name = value (e.g. { Accept = "text/plain" }), got ${Array.isArray(value) ? 'a list' : describe(value)}`,
    );
  }
  for (const [name, raw] of Object.entries(value as Record<string, LuaValue>)) {
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
      throw new InvalidInputError(`${fn}: header "${name}" must be a string, got ${describe(raw)}`);
    }
    try {
      headers.append(name, String(raw));
    } catch {
      throw new InvalidInputError(`${fn}: header "${name}" is not a valid HTTP header name or value`);
    }
  }
  return headers;
}

/** Elapsed seconds since a `performance.now()` reading, to the millisecond (durations are seconds here). */
export function secondsSince(startedMs: number): number {
  return Math.round(performance.now() - startedMs) / 1000;
}

/** The most specific text an error carries: fetch wraps the socket's error in `cause`. */
export function errorDetail(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5; depth++) {
    const cause = (current as { cause?: unknown } | null)?.cause;
    if (cause === undefined || cause === null) break;
    current = cause;
  }
  // Several addresses tried (happy eyeballs): the aggregate's own message is empty.
  const errors = (current as { errors?: unknown[] } | null)?.errors;
  if (Array.isArray(errors) && errors.length > 0 && !(current as Error).message) current = errors[0];
  const detail =
    current instanceof Error ? current.message || (current as { code?: string }).code || current.name : String(current);
  // fetch refuses the ports of other protocols outright, and says no more than this.
  if (detail === 'bad port') return 'bad port (fetch refuses ports of other protocols, such as 22, 25 or 6000)';
  return detail;
}
