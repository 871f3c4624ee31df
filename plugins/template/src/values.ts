/** Value helpers shared by the Jinja filters and the Go template functions. */

/** A mapping from the context (a Lua table with string keys, a JSON object), not a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Quotes for a POSIX shell the way Python's shlex.quote (Ansible's `quote`) does: words of safe
 * characters stay bare, everything else is single-quoted with embedded quotes spliced in.
 */
export function shellQuote(value: unknown): string {
  const text = stringOf(value);
  if (text === '') return "''";
  if (/^[\w@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'"'"'`)}'`;
}

export function base64Encode(value: unknown): string {
  return Buffer.from(stringOf(value), 'utf8').toString('base64');
}

export function base64Decode(value: unknown): string {
  const text = stringOf(value).replace(/\s+/g, '');
  // Buffer.from silently skips invalid characters; a template must not turn garbage into text.
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw new Error(`b64decode: "${text}" is not base64`);
  return Buffer.from(text, 'base64').toString('utf8');
}

/** Ansible's `bool`: yes/on/1/true (any case) and the number 1 are true, everything else false. */
export function toBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1;
  if (typeof value === 'string' || value instanceof String) {
    return ['yes', 'on', '1', 'true', 'y', 't'].includes(String(value).trim().toLowerCase());
  }
  return false;
}

/** Text of a scalar as templates print it; null and undefined are empty. */
export function stringOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  return String(value);
}

/** JSON of a value; undefined (a missing optional value) becomes null rather than vanishing. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value === undefined ? null : value, null, indent) ?? 'null';
}

/**
 * Items Jinja's `range()` may make, and turns Go's `{{ range }}` may take, in one rendering, all
 * together. A rendering runs on the caller's thread and cannot be interrupted, so what it may
 * iterate is bounded before it starts: `range(0, 100000000)` (2.5 GB) and two nested
 * `range(0, 10000)` loops (10^8 turns, 95 s of a frozen master) are refused with a clear error
 * instead. An empty loop turn costs 2-20 µs (idle to load 20), so the budget holds a rendering's
 * loops to well under a second or two.
 */
export const RANGE_ITEMS_PER_RENDERING = 100_000;
