/**
 * Go's fmt as templates see it: how a value prints (`%v`), `print`, `println` and `printf`.
 * JSON-shaped values map onto Go's: whole numbers print as ints, other numbers as float64, lists
 * as `[a b]`, mappings as `map[k:v]` with sorted keys. One deliberate difference: null prints as
 * an empty string, not `<nil>`, because the output lands in shell commands.
 */
import { isPlainObject } from '../values.js';

export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  if (isPlainObject(value)) return 'map[string]interface {}';
  return typeof value;
}

/** `%v`. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return formatNumber(value);
  if (Array.isArray(value)) return `[${value.map(nested).join(' ')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${nested(value[k])}`).join(' ')}]`;
  }
  return String(value);
}

/** Inside a list or map Go shows nil as `<nil>`; an empty string there would hide the element. */
function nested(value: unknown): string {
  return value === null || value === undefined ? '<nil>' : formatValue(value);
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  return String(n);
}

/** strconv.Quote, close enough: JSON's escapes with Go's `\x` for control bytes. */
export function goQuote(text: string): string {
  return JSON.stringify(text).replace(/\\u00([0-7][0-9a-fA-F])/g, '\\x$1');
}

/** fmt.Sprint: a space between operands when neither side is a string. */
export function sprint(args: unknown[]): string {
  let out = '';
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(arg);
  });
  return out;
}

/** fmt.Sprintln: spaces between all operands, and a newline. */
export function sprintln(args: unknown[]): string {
  return `${args.map(formatValue).join(' ')}\n`;
}

interface Spec {
  minus: boolean;
  plus: boolean;
  space: boolean;
  zero: boolean;
  sharp: boolean;
  width?: number;
  precision?: number;
}

function pad(text: string, spec: Spec, numeric: boolean): string {
  if (spec.width === undefined || text.length >= spec.width) return text;
  const fill = spec.width - text.length;
  if (spec.minus) return text + ' '.repeat(fill);
  if (spec.zero && numeric) {
    const sign = /^[+\- ]/.test(text) ? text[0] : '';
    return sign + '0'.repeat(fill) + text.slice(sign.length);
  }
  return ' '.repeat(fill) + text;
}

function signed(text: string, n: number, spec: Spec): string {
  if (n >= 0 && !Object.is(n, -0)) {
    if (spec.plus) return `+${text}`;
    if (spec.space) return ` ${text}`;
  }
  return text;
}

function badVerb(verb: string, arg: unknown): string {
  return `%!${verb}(${goTypeName(arg)}=${formatValue(arg)})`;
}

function formatInteger(n: number, radix: number, spec: Spec, upper: boolean): string {
  let digits = Math.abs(n).toString(radix);
  if (upper) digits = digits.toUpperCase();
  if (spec.precision !== undefined) digits = digits.padStart(spec.precision, '0');
  if (spec.sharp)
    digits = (radix === 16 ? (upper ? '0X' : '0x') : radix === 8 ? '0' : radix === 2 ? '0b' : '') + digits;
  return signed(n < 0 ? `-${digits}` : digits, n, spec);
}

function formatFloat(n: number, verb: string, spec: Spec): string {
  let text: string;
  switch (verb) {
    case 'f':
    case 'F':
      text = n.toFixed(spec.precision ?? 6);
      break;
    case 'e':
    case 'E':
      // Go always writes at least two exponent digits: 1.5e+06.
      text = n.toExponential(spec.precision ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
      break;
    default: {
      text = spec.precision === undefined ? String(n) : String(Number(n.toPrecision(spec.precision)));
      if (/e/.test(text)) text = text.replace(/e([+-])(\d)$/, 'e$10$2');
    }
  }
  if (verb === 'E' || verb === 'G') text = text.toUpperCase();
  return signed(text, n, spec);
}

function formatOne(verb: string, arg: unknown, spec: Spec): string {
  switch (verb) {
    case 'v':
      if (spec.sharp && typeof arg === 'string') return pad(goQuote(arg), spec, false);
      return pad(
        typeof arg === 'number' ? signed(formatValue(arg), arg, spec) : formatValue(arg),
        spec,
        typeof arg === 'number',
      );
    case 's':
      if (typeof arg === 'string' || Array.isArray(arg) || isPlainObject(arg)) {
        const text = formatValue(arg);
        return pad(spec.precision === undefined ? text : text.slice(0, spec.precision), spec, false);
      }
      return badVerb(verb, arg);
    case 'q':
      if (typeof arg === 'string') return pad(goQuote(arg), spec, false);
      if (typeof arg === 'number' && Number.isInteger(arg)) return pad(`'${String.fromCodePoint(arg)}'`, spec, false);
      return badVerb(verb, arg);
    case 'd':
      return typeof arg === 'number' && Number.isInteger(arg)
        ? pad(formatInteger(arg, 10, spec, false), spec, true)
        : badVerb(verb, arg);
    case 'x':
    case 'X':
      if (typeof arg === 'number' && Number.isInteger(arg))
        return pad(formatInteger(arg, 16, spec, verb === 'X'), spec, true);
      if (typeof arg === 'string') {
        const hex = Buffer.from(arg, 'utf8').toString('hex');
        return pad(verb === 'X' ? hex.toUpperCase() : hex, spec, false);
      }
      return badVerb(verb, arg);
    case 'o':
    case 'b':
      return typeof arg === 'number' && Number.isInteger(arg)
        ? pad(formatInteger(arg, verb === 'o' ? 8 : 2, spec, false), spec, true)
        : badVerb(verb, arg);
    case 'c':
      return typeof arg === 'number' && Number.isInteger(arg)
        ? pad(String.fromCodePoint(arg), spec, false)
        : badVerb(verb, arg);
    case 't':
      return typeof arg === 'boolean' ? pad(String(arg), spec, false) : badVerb(verb, arg);
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      return typeof arg === 'number' ? pad(formatFloat(arg, verb, spec), spec, true) : badVerb(verb, arg);
    default:
      return `%!${verb}(${goTypeName(arg)}=${formatValue(arg)})`;
  }
}

/** fmt.Sprintf for the verbs v s q d x X o b c t f F e E g G and %%, with flags, width, precision. */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  const re = /%([-+ 0#]*)(\d+)?(?:\.(\d*))?(.?)/gy;
  let i = 0;
  while (i < format.length) {
    const percent = format.indexOf('%', i);
    if (percent === -1) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, percent);
    re.lastIndex = percent;
    const m = re.exec(format)!;
    i = re.lastIndex;
    const [, flags, width, precision, verb] = m;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (verb === '') {
      out += '%!(NOVERB)';
      continue;
    }
    const spec: Spec = {
      minus: flags.includes('-'),
      plus: flags.includes('+'),
      space: flags.includes(' '),
      zero: flags.includes('0'),
      sharp: flags.includes('#'),
      width: width === undefined ? undefined : Number(width),
      precision: precision === undefined ? undefined : Number(precision || 0),
    };
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatOne(verb, args[argIndex++], spec);
  }
  if (argIndex < args.length) {
    const extra = args.slice(argIndex).map((a) => `${goTypeName(a)}=${formatValue(a)}`);
    out += `%!(EXTRA ${extra.join(', ')})`;
  }
  return out;
}
