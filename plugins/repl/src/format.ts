import type { LuaValue } from '@runner/plugin-sdk';

export interface FormatOptions {
  /** Tables nested deeper than this show as `{...}`. */
  maxDepth: number;
  /** Entries shown per table; the rest are counted (`... 12 more`). */
  maxEntries: number;
  /** Entries shown in all tables of one value together, so that `_G` stays readable. */
  maxTotal: number;
  /** Lay long tables out over several indented lines (terminal); otherwise always one line. */
  multiline: boolean;
  /** A table that fits in this many columns stays on one line. */
  width: number;
}

export const DEFAULT_FORMAT: FormatOptions = { maxDepth: 4, maxEntries: 50, maxTotal: 200, multiline: true, width: 80 };

// What the runtime returns in place of values JavaScript cannot hold (lenient conversion).
const PLACEHOLDER = /^<(userdata|thread|lightuserdata|cycle|too deep)>$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INTEGER_KEY = /^-?(0|[1-9][0-9]*)$/;
// fengari's integers are 32-bit: a whole number outside this range can only have been a float.
const LUA_INT_MIN = -(2 ** 31);
const LUA_INT_MAX = 2 ** 31 - 1;
const LUA_KEYWORDS = new Set(
  'and break do else elseif end false for function goto if in local nil not or repeat return then true until while'.split(
    ' ',
  ),
);

/** The values a chunk returned, as the `lua` REPL prints them: tab-separated, strings unquoted. */
export function formatResults(values: readonly LuaValue[], options: FormatOptions = DEFAULT_FORMAT): string {
  return values.map((v) => (typeof v === 'string' ? v : formatValue(v, options))).join('\t');
}

/** One value as Lua-like source: strings quoted, tables as constructors with sorted keys. */
export function formatValue(value: LuaValue, options: FormatOptions = DEFAULT_FORMAT): string {
  return format(value, options, { left: options.maxTotal }, 0, 0);
}

function format(
  value: LuaValue,
  options: FormatOptions,
  budget: { left: number },
  depth: number,
  indent: number,
): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string') return PLACEHOLDER.test(value) ? value : quote(value);
  if (!Array.isArray(value) && (value as { kind?: unknown }).kind === 'lua-function') return '<function>';
  const entries = tableEntries(value as LuaValue[] | Record<string, LuaValue>);
  if (entries.length === 0) return '{}';
  if (depth >= options.maxDepth) return '{...}';
  const shown = entries.slice(0, Math.max(0, Math.min(options.maxEntries, budget.left)));
  budget.left -= shown.length;
  const parts = shown.map(([key, v]) => {
    const text = format(v, options, budget, depth + 1, indent + 2);
    return key === undefined ? text : `${key} = ${text}`;
  });
  if (entries.length > shown.length) parts.push(`... ${entries.length - shown.length} more`);
  const flat = `{ ${parts.join(', ')} }`;
  if (!options.multiline || (indent + flat.length <= options.width && !flat.includes('\n'))) return flat;
  const pad = ' '.repeat(indent + 2);
  return `{\n${parts.map((p) => `${pad}${p}`).join(',\n')}\n${' '.repeat(indent)}}`;
}

/**
 * A sequence keeps its order with no keys shown; any other table lists integer keys in numeric
 * order, then the rest alphabetically. Converted tables have lost the type of their keys, so a key
 * that reads as an integer is shown as one (`[10]`).
 */
function tableEntries(table: LuaValue[] | Record<string, LuaValue>): [string | undefined, LuaValue][] {
  if (Array.isArray(table)) return table.map((v) => [undefined, v]);
  const keys = Object.keys(table);
  const integers = keys.filter((k) => INTEGER_KEY.test(k)).sort((a, b) => Number(a) - Number(b));
  const others = keys.filter((k) => !INTEGER_KEY.test(k)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return [...integers, ...others].map((k) => [formatKey(k), table[k]]);
}

function formatKey(key: string): string {
  if (INTEGER_KEY.test(key)) return `[${key}]`;
  if (IDENTIFIER.test(key) && !LUA_KEYWORDS.has(key)) return key;
  return `[${quote(key)}]`;
}

/** Lua's `tostring` of a number: integers plainly, floats as `%.14g` with `.0` when whole. */
export function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (Number.isInteger(n) && n >= LUA_INT_MIN && n <= LUA_INT_MAX && !Object.is(n, -0)) return String(n);
  const text = g14(n);
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}

/** C's `%.14g`. */
function g14(n: number): string {
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, exp] = n.toExponential(13).split('e');
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 14) {
    const m = mantissa.replace(/\.?0+$/, '');
    const sign = exponent < 0 ? '-' : '+';
    return `${m}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  const fixed = n.toFixed(Math.max(0, 13 - exponent));
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** A Lua string literal that reads back as the same string. */
export function quote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    // A decimal escape must not swallow a digit that follows it, hence three digits.
    else if (code < 0x20 || code === 0x7f) out += `\\${String(code).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
