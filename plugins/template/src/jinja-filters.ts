/**
 * Filters and tests that Ansible users reach for and nunjucks lacks (or gets subtly wrong), added
 * to the environment beside nunjucks' own (default/d, lower, upper, join, length, trim, replace,
 * first, last, sort, dictsort, ...).
 */
import { posix } from 'node:path';
import { sprintf } from './go/format.js';
import { base64Decode, base64Encode, isPlainObject, shellQuote, stringOf, toBool, toJson } from './values.js';

type Filter = (this: FilterThis, value: any, ...args: any[]) => unknown;

/** nunjucks calls a filter with its render context as `this`. */
interface FilterThis {
  env: { getFilter(name: string): Filter };
}

/** nunjucks passes `name=value` arguments as a trailing object marked `__keywords`. */
function splitKeywords(args: unknown[]): { positional: unknown[]; keywords: Record<string, unknown> } {
  const last = args[args.length - 1];
  if (isPlainObject(last) && last.__keywords === true) {
    return { positional: args.slice(0, -1), keywords: last };
  }
  return { positional: args, keywords: {} };
}

/** Python's `re` syntax differs from JS in named groups and replacement references. */
function pythonPattern(pattern: string): string {
  return pattern.replace(/\(\?P<(\w+)>/g, '(?<$1>').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');
}

function pythonReplacement(replacement: string): string {
  return replacement
    .replace(/\$/g, '$$$$')
    .replace(/\\g<(\d+)>/g, '$$$1')
    .replace(/\\g<(\w+)>/g, '$$<$1>')
    .replace(/\\(\d+)/g, '$$$1');
}

function regexFlags(keywords: Record<string, unknown>, positional: unknown[], offset: number, base: string): string {
  const ignorecase = keywords.ignorecase ?? positional[offset];
  const multiline = keywords.multiline ?? positional[offset + 1];
  return base + (ignorecase ? 'i' : '') + (multiline ? 'm' : '');
}

/** Python's str.split: no separator splits on runs of whitespace and drops empty ends. */
export function pythonSplit(text: string, separator?: unknown, maxsplit?: unknown): string[] {
  const limit = typeof maxsplit === 'number' && maxsplit >= 0 ? maxsplit : Infinity;
  if (separator === undefined || separator === null) {
    const words = text
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '');
    if (limit >= words.length - 1) return words;
    // Re-split keeping the remainder intact, as Python does.
    const out: string[] = [];
    let rest = text.trimStart();
    while (out.length < limit) {
      const m = /\s+/.exec(rest);
      if (!m) break;
      out.push(rest.slice(0, m.index));
      rest = rest.slice(m.index + m[0].length);
    }
    return [...out, rest];
  }
  const sep = stringOf(separator);
  if (sep === '') throw new Error('split: empty separator');
  const parts = text.split(sep);
  if (parts.length - 1 <= limit) return parts;
  return [...parts.slice(0, limit), parts.slice(limit).join(sep)];
}

/**
 * Python's `%` formatting (Jinja's `format` filter): `%s`, `%d`, `%i`, `%f`, `%x`, `%o`, `%e`,
 * `%g`, `%r`, `%%` with flags, width and precision, and `%(name)s` with a mapping.
 */
export function pythonFormat(format: string, args: unknown[]): string {
  const mapping = args.length === 1 && isPlainObject(args[0]) ? args[0] : undefined;
  let next = 0;
  return format.replace(/%(\((\w+)\))?([-+ 0#]*)(\d+)?(?:\.(\d+))?([diouxXeEfFgGcrs%])/g, (...m) => {
    const [whole, , key, flags, width, precision, verb] = m as string[];
    if (verb === '%') return '%';
    if (key !== undefined && !mapping) throw new Error(`format: "${whole}" needs a mapping argument`);
    if (key === undefined && next >= args.length) throw new Error('format: not enough arguments for format string');
    const value = key !== undefined ? mapping![key] : args[next++];
    const spec = `%${flags}${width ?? ''}${precision !== undefined ? `.${precision}` : ''}`;
    switch (verb) {
      case 's':
        return sprintf(`${spec}s`, [typeof value === 'string' ? value : stringOf(toPrintable(value))]);
      case 'r':
        return sprintf(`${spec}s`, [toJson(value)]);
      case 'd':
      case 'i':
      case 'u':
        return sprintf(`${spec}d`, [Math.trunc(Number(value))]);
      case 'c':
        return sprintf(`${spec}c`, [typeof value === 'string' ? value.codePointAt(0) : Number(value)]);
      default:
        return sprintf(`${spec}${verb}`, [Number(value)]);
    }
  });
}

function toPrintable(value: unknown): unknown {
  return Array.isArray(value) || isPlainObject(value) ? toJson(value) : value;
}

function number(value: unknown, fallback: unknown, parse: (text: string) => number): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return parse(String(value));
  const parsed = parse(stringOf(value).trim());
  return Number.isNaN(parsed) ? (fallback ?? 0) : parsed;
}

export const extraFilters: Record<string, Filter> = {
  bool: (value) => toBool(value),
  format: (value, ...args) => pythonFormat(stringOf(value), args),
  // Jinja's map: `map(attribute='name')`, or a filter applied to each item: `map('upper')`.
  map: function (value, ...args) {
    const { positional, keywords } = splitKeywords(args);
    if (!Array.isArray(value)) throw new Error('map: expects a list');
    if (keywords.attribute !== undefined) {
      const path = stringOf(keywords.attribute).split('.');
      return value.map(
        (item) =>
          path.reduce((v: any, k) => (v === null || v === undefined ? undefined : v[k]), item) ?? keywords.default,
      );
    }
    const [name, ...rest] = positional;
    const filter = this.env.getFilter(stringOf(name));
    return value.map((item) => filter.call(this, item, ...rest));
  },
  // Jinja's int/float fall back to 0; nunjucks' to undefined, which would print nothing.
  int: (value, ...args) => {
    const { positional, keywords } = splitKeywords(args);
    const base = Number(keywords.base ?? positional[1] ?? 10);
    return number(value, keywords.default ?? positional[0], (t) => {
      if (base === 10) return t === '' ? NaN : Math.trunc(Number(t));
      const digits = base === 16 ? t.replace(/^[+-]?0x/i, '') : t;
      return /^[0-9a-z]+$/i.test(digits) ? parseInt(digits, base) : NaN;
    });
  },
  float: (value, fallback) => number(value, fallback, (t) => (t === '' ? NaN : Number(t))),
  to_json: (value) => toJson(value),
  tojson: (value) => toJson(value),
  to_nice_json: (value, ...args) => {
    const { positional, keywords } = splitKeywords(args);
    const indent = keywords.indent ?? positional[0];
    return toJson(value, typeof indent === 'number' ? indent : 4);
  },
  from_json: (value) => JSON.parse(stringOf(value)),
  b64encode: (value) => base64Encode(value),
  b64decode: (value) => base64Decode(value),
  quote: (value) => shellQuote(value),
  basename: (value) => posix.basename(stringOf(value)),
  dirname: (value) => posix.dirname(stringOf(value)),
  regex_replace: (value, ...args) => {
    const { positional, keywords } = splitKeywords(args);
    const pattern = stringOf(keywords.pattern ?? positional[0]);
    const replacement = stringOf(keywords.replacement ?? positional[1]);
    const regex = new RegExp(pythonPattern(pattern), regexFlags(keywords, positional, 2, 'g'));
    return stringOf(value).replace(regex, pythonReplacement(replacement));
  },
  regex_search: (value, ...args) => {
    const { positional, keywords } = splitKeywords(args);
    const regex = new RegExp(pythonPattern(stringOf(positional[0])), regexFlags(keywords, positional, 1, ''));
    return regex.exec(stringOf(value))?.[0] ?? null;
  },
  split: (value, separator, maxsplit) => pythonSplit(stringOf(value), separator, maxsplit),
  dict2items: (value, ...args) => {
    const { keywords } = splitKeywords(args);
    const keyName = stringOf(keywords.key_name ?? 'key');
    const valueName = stringOf(keywords.value_name ?? 'value');
    if (!isPlainObject(value)) throw new Error('dict2items: expects a mapping');
    return Object.entries(value).map(([k, v]) => ({ [keyName]: k, [valueName]: v }));
  },
  items2dict: (value, ...args) => {
    const { keywords } = splitKeywords(args);
    const keyName = stringOf(keywords.key_name ?? 'key');
    const valueName = stringOf(keywords.value_name ?? 'value');
    if (!Array.isArray(value)) throw new Error('items2dict: expects a list');
    return Object.fromEntries(value.map((item) => [stringOf(item?.[keyName]), item?.[valueName]]));
  },
  ternary: (value, whenTrue, whenFalse, whenNone) =>
    value === null && whenNone !== undefined ? whenNone : value ? whenTrue : whenFalse,
  min: (value) => (Array.isArray(value) && value.length > 0 ? value.reduce((a, b) => (b < a ? b : a)) : undefined),
  max: (value) => (Array.isArray(value) && value.length > 0 ? value.reduce((a, b) => (b > a ? b : a)) : undefined),
  unique: (value) => (Array.isArray(value) ? [...new Set(value)] : value),
};

export const extraTests: Record<string, (value: unknown, ...args: unknown[]) => boolean> = {
  // Jinja spells nunjucks' `null` test `none`.
  none: (value) => value === null,
  boolean: (value) => typeof value === 'boolean',
  match: (value, pattern) => new RegExp(`^(?:${pythonPattern(stringOf(pattern))})`).test(stringOf(value)),
  search: (value, pattern) => new RegExp(pythonPattern(stringOf(pattern))).test(stringOf(value)),
};
