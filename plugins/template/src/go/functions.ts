/**
 * The functions of the Go syntax: text/template's builtins (except `call`) and the Sprig
 * functions Helm users expect, with Sprig's argument order (`join ", " .list`, `default "x" .v`).
 * `and` and `or` are evaluated lazily by the executor; they are listed so the parser knows them.
 */
import { base64Decode, base64Encode, isPlainObject, shellQuote, toJson } from '../values.js';
import { formatValue, goQuote, goTypeName, sprint, sprintf, sprintln } from './format.js';

/** A key that is not in a mapping; the executor reports it as an unknown variable. */
export class MissingKeyError extends Error {
  constructor(readonly path: string) {
    super(`unknown template variable "${path}"`);
  }
}

export interface CallInfo {
  /** For each argument, the path it was read from when it is a field chain (`vars`), to name a missing key. */
  labels: readonly (string | undefined)[];
}

export type GoFunction = (args: unknown[], call: CallInfo) => unknown;

/** Go's truth: false, 0, nil, and empty strings, lists and maps are false. */
export function truth(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

function arity(name: string, args: unknown[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw new Error(`wrong number of args for ${name}: want ${want} got ${args.length}`);
  }
}

function str(name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`${name}: expected a string, got ${goTypeName(value)}`);
}

function int(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new Error(`${name}: expected an integer, got ${goTypeName(value)} ${formatValue(value)}`);
  }
  return value;
}

type Kind = 'nil' | 'bool' | 'number' | 'string' | 'other';

function kindOf(value: unknown): Kind {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string') return 'string';
  return 'other';
}

function equal(name: string, a: unknown, b: unknown): boolean {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === 'other' || kb === 'other')
    throw new Error(`${name}: cannot compare ${goTypeName(ka === 'other' ? a : b)}`);
  if (ka === 'nil' || kb === 'nil') return ka === kb;
  if (ka !== kb) throw new Error(`${name}: incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`);
  return a === b;
}

function compare(name: string, a: unknown, b: unknown): number {
  const ka = kindOf(a);
  if ((ka !== 'number' && ka !== 'string') || ka !== kindOf(b)) {
    throw new Error(`${name}: incompatible types for comparison: ${goTypeName(a)} and ${goTypeName(b)}`);
  }
  return (a as number | string) < (b as number | string) ? -1 : a === b ? 0 : 1;
}

function indexOne(collection: unknown, key: unknown, label: string | undefined): unknown {
  if (Array.isArray(collection) || typeof collection === 'string') {
    const i = int('index', key);
    if (i < 0 || i >= collection.length) throw new Error(`index out of range: ${i}`);
    return typeof collection === 'string' ? collection.charCodeAt(i) : collection[i];
  }
  if (isPlainObject(collection)) {
    const k = str('index', key);
    if (!Object.hasOwn(collection, k) || collection[k] === undefined) {
      throw new MissingKeyError(label === undefined ? k : `${label}.${k}`);
    }
    return collection[k];
  }
  if (collection === null || collection === undefined) throw new Error('index of nil');
  throw new Error(`can't index item of type ${goTypeName(collection)}`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"'\0]/g, (c) =>
    c === '\0' ? '\uFFFD' : { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' }[c]!,
  );
}

function escapeJs(text: string): string {
  // Control characters are exactly what must be escaped here.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\\'"<>&=\n\r\t]|[\x00-\x1f]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case "'":
        return "\\'";
      case '"':
        return '\\"';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    }
  });
}

export const goFunctions: Record<string, GoFunction> = {
  // Placeholders: the executor evaluates these itself, to short-circuit.
  and: () => undefined,
  or: () => undefined,
  not: (args) => (arity('not', args, 1), !truth(args[0])),
  len: (args) => {
    arity('len', args, 1);
    const [v] = args;
    // Go counts bytes of a string.
    if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
    if (Array.isArray(v)) return v.length;
    if (isPlainObject(v)) return Object.keys(v).length;
    throw new Error(`len of ${goTypeName(v)}`);
  },
  index: (args, call) => {
    arity('index', args, 1, Infinity);
    let value = args[0];
    let label = call.labels[0];
    for (const key of args.slice(1)) {
      value = indexOne(value, key, label);
      label = label === undefined ? undefined : `${label}.${String(key)}`;
    }
    return value;
  },
  slice: (args) => {
    arity('slice', args, 1, 3);
    const [v, from, to] = args;
    if (typeof v !== 'string' && !Array.isArray(v)) throw new Error(`can't slice item of type ${goTypeName(v)}`);
    const i = from === undefined ? 0 : int('slice', from);
    const j = to === undefined ? v.length : int('slice', to);
    if (i < 0 || j < i || j > v.length) throw new Error(`slice index out of range: ${i}:${j}`);
    return v.slice(i, j);
  },
  print: (args) => sprint(args),
  println: (args) => sprintln(args),
  printf: (args) => (arity('printf', args, 1, Infinity), sprintf(str('printf', args[0]), args.slice(1))),
  eq: (args) => {
    arity('eq', args, 2, Infinity);
    return args.slice(1).some((b) => equal('eq', args[0], b));
  },
  ne: (args) => (arity('ne', args, 2), !equal('ne', args[0], args[1])),
  lt: (args) => (arity('lt', args, 2), compare('lt', args[0], args[1]) < 0),
  le: (args) => (arity('le', args, 2), compare('le', args[0], args[1]) <= 0),
  gt: (args) => (arity('gt', args, 2), compare('gt', args[0], args[1]) > 0),
  ge: (args) => (arity('ge', args, 2), compare('ge', args[0], args[1]) >= 0),
  html: (args) => escapeHtml(sprint(args)),
  js: (args) => escapeJs(sprint(args)),
  urlquery: (args) => encodeURIComponent(sprint(args)).replace(/%20/g, '+'),

  // Sprig
  default: (args) => (arity('default', args, 1, 2), args.length === 2 && truth(args[1]) ? args[1] : args[0]),
  empty: (args) => (arity('empty', args, 1), !truth(args[0])),
  ternary: (args) => (arity('ternary', args, 3), truth(args[2]) ? args[0] : args[1]),
  upper: (args) => (arity('upper', args, 1), str('upper', args[0]).toUpperCase()),
  lower: (args) => (arity('lower', args, 1), str('lower', args[0]).toLowerCase()),
  title: (args) => (
    arity('title', args, 1),
    str('title', args[0]).replace(/(^|\s)(\S)/g, (_, s, c) => s + c.toUpperCase())
  ),
  trim: (args) => (arity('trim', args, 1), str('trim', args[0]).trim()),
  trimPrefix: (args) => {
    arity('trimPrefix', args, 2);
    const [prefix, s] = [str('trimPrefix', args[0]), str('trimPrefix', args[1])];
    return s.startsWith(prefix) ? s.slice(prefix.length) : s;
  },
  trimSuffix: (args) => {
    arity('trimSuffix', args, 2);
    const [suffix, s] = [str('trimSuffix', args[0]), str('trimSuffix', args[1])];
    return suffix !== '' && s.endsWith(suffix) ? s.slice(0, -suffix.length) : s;
  },
  join: (args) => {
    arity('join', args, 2);
    const list = args[1];
    if (!Array.isArray(list)) return formatValue(list);
    return list
      .filter((x) => x !== null && x !== undefined)
      .map(formatValue)
      .join(str('join', args[0]));
  },
  splitList: (args) => (arity('splitList', args, 2), str('splitList', args[1]).split(str('splitList', args[0]))),
  replace: (args) => {
    arity('replace', args, 3);
    return str('replace', args[2]).split(str('replace', args[0])).join(str('replace', args[1]));
  },
  contains: (args) => (arity('contains', args, 2), str('contains', args[1]).includes(str('contains', args[0]))),
  hasPrefix: (args) => (arity('hasPrefix', args, 2), str('hasPrefix', args[1]).startsWith(str('hasPrefix', args[0]))),
  hasSuffix: (args) => (arity('hasSuffix', args, 2), str('hasSuffix', args[1]).endsWith(str('hasSuffix', args[0]))),
  quote: (args) =>
    args
      .filter((a) => a !== null && a !== undefined)
      .map((a) => goQuote(formatValue(a)))
      .join(' '),
  squote: (args) =>
    args
      .filter((a) => a !== null && a !== undefined)
      .map((a) => `'${formatValue(a)}'`)
      .join(' '),
  shellquote: (args) => args.map((a) => shellQuote(formatValue(a))).join(' '),
  toString: (args: unknown[]) => (arity('toString', args, 1), formatValue(args[0])),
  toJson: (args) => (arity('toJson', args, 1), toJson(args[0])),
  toPrettyJson: (args) => (arity('toPrettyJson', args, 1), toJson(args[0], 2)),
  fromJson: (args) => (arity('fromJson', args, 1), JSON.parse(str('fromJson', args[0]))),
  b64enc: (args) => (arity('b64enc', args, 1), base64Encode(formatValue(args[0]))),
  b64dec: (args) => (arity('b64dec', args, 1), base64Decode(str('b64dec', args[0]))),
  int: (args) => {
    arity('int', args, 1);
    const [v] = args;
    if (typeof v === 'boolean') return v ? 1 : 0;
    const n = typeof v === 'number' ? v : Number(str('int', v).trim());
    return Number.isNaN(n) ? 0 : Math.trunc(n);
  },
  float64: (args) => {
    arity('float64', args, 1);
    const [v] = args;
    if (typeof v === 'boolean') return v ? 1 : 0;
    const n = typeof v === 'number' ? v : Number(str('float64', v).trim());
    return Number.isNaN(n) ? 0 : n;
  },
  hasKey: (args) => {
    arity('hasKey', args, 2);
    return isPlainObject(args[0]) && Object.hasOwn(args[0], str('hasKey', args[1]));
  },
  list: (args) => [...args],
  dict: (args) => {
    if (args.length % 2 !== 0) throw new Error('dict: expects key and value pairs');
    const out: Record<string, unknown> = {};
    for (let i = 0; i < args.length; i += 2) out[str('dict', args[i])] = args[i + 1];
    return out;
  },
};

export const GO_FUNCTION_NAMES: ReadonlySet<string> = new Set(Object.keys(goFunctions));
