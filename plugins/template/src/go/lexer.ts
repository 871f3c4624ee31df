/**
 * Tokens of Go's text/template: text between actions, and the words inside `{{ }}`. Trim markers
 * (`{{- ` and ` -}}`) are applied here, to the neighbouring text, as Go's lexer does; comments
 * (`{{/* ... *\/}}`) are dropped here too.
 */
import { TemplateError } from '@runner/plugin-sdk';

export type TokenType =
  | 'text'
  | 'left'
  | 'right'
  | 'eof'
  | 'field'
  | 'dot'
  | 'variable'
  | 'identifier'
  | 'keyword'
  | 'bool'
  | 'nil'
  | 'string'
  | 'number'
  | 'pipe'
  | 'lparen'
  | 'rparen'
  | 'comma'
  | 'declare'
  | 'assign';

export interface Position {
  line: number;
  column: number;
}

export interface Token {
  type: TokenType;
  /** Text for `text`; the decoded value for strings; the name (without `.`/`$`) for fields. */
  value: string;
  /** Numeric value for `number` (Go character constants are numbers too). */
  number?: number;
  pos: Position;
  /** Whether whitespace separates it from the previous token: `.a.b` is one chain, `.a .b` two. */
  spaced: boolean;
}

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'break', 'continue', 'define', 'template', 'block']);
const SPACE = /[ \t\r\n]/;
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;

const ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
};

export function lex(source: string): Token[] {
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lineStarts.push(i + 1);
  const positionAt = (offset: number): Position => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
  };
  const fail = (message: string, offset: number): never => {
    throw new TemplateError('syntax', message, positionAt(offset), { syntax: 'go' });
  };

  const tokens: Token[] = [];
  let i = 0;
  let trimNextText = false;

  while (i < source.length) {
    const open = source.indexOf('{{', i);
    let text = source.slice(i, open === -1 ? source.length : open);
    if (trimNextText) text = text.replace(/^[ \t\r\n]+/, '');
    trimNextText = false;
    if (open === -1) {
      if (text) tokens.push({ type: 'text', value: text, pos: positionAt(i), spaced: false });
      break;
    }
    let p = open + 2;
    // `{{- ` trims: the dash must be followed by a space, else `{{-3}}` is the number -3.
    if (source[p] === '-' && SPACE.test(source[p + 1] ?? '')) {
      text = text.replace(/[ \t\r\n]+$/, '');
      p += 2;
    }
    if (text) tokens.push({ type: 'text', value: text, pos: positionAt(i), spaced: false });

    // A comment must start right after the delimiter (and trim marker) and end right before one.
    if (source.startsWith('/*', p)) {
      const close = source.indexOf('*/', p + 2);
      if (close === -1) fail('unclosed comment', p);
      const end = /^(?:[ \t\r\n]-)?\}\}/.exec(source.slice(close + 2, close + 6));
      if (!end) fail('comment ends before closing delimiter', close);
      trimNextText = end![0].length > 2;
      i = close + 2 + end![0].length;
      continue;
    }

    tokens.push({ type: 'left', value: '{{', pos: positionAt(open), spaced: false });
    i = lexAction(source, p, tokens, positionAt, fail, (trim) => (trimNextText = trim));
  }
  tokens.push({ type: 'eof', value: '', pos: positionAt(source.length), spaced: true });
  return tokens;
}

/** Lexes one action from `start` (after `{{`); returns the offset after its `}}`. */
function lexAction(
  source: string,
  start: number,
  tokens: Token[],
  positionAt: (offset: number) => Position,
  fail: (message: string, offset: number) => never,
  setTrim: (trim: boolean) => void,
): number {
  let i = start;
  let spaced = true;
  let depth = 0;
  const push = (type: TokenType, value: string, at: number, number?: number) => {
    tokens.push({ type, value, pos: positionAt(at), spaced, number });
    spaced = false;
  };
  for (;;) {
    if (i >= source.length) fail('unclosed action: missing "}}"', start - 2);
    const c = source[i];
    if (SPACE.test(c)) {
      // ` -}}` trims the text after the action.
      if (source[i + 1] === '-' && source.startsWith('}}', i + 2)) {
        if (depth > 0) fail('unclosed left paren', i);
        push('right', '}}', i + 2);
        setTrim(true);
        return i + 4;
      }
      spaced = true;
      i++;
      continue;
    }
    if (source.startsWith('}}', i)) {
      if (depth > 0) fail('unclosed left paren', i);
      push('right', '}}', i);
      setTrim(false);
      return i + 2;
    }
    if (c === '|') {
      push('pipe', c, i++);
    } else if (c === '(') {
      depth++;
      push('lparen', c, i++);
    } else if (c === ')') {
      if (--depth < 0) fail('unexpected right paren', i);
      push('rparen', c, i++);
    } else if (c === ',') {
      push('comma', c, i++);
    } else if (c === ':' && source[i + 1] === '=') {
      push('declare', ':=', i);
      i += 2;
    } else if (c === '=') {
      push('assign', '=', i++);
    } else if (c === '"') {
      const { value, end } = lexQuoted(source, i, '"', fail);
      push('string', value, i);
      i = end;
    } else if (c === '`') {
      const close = source.indexOf('`', i + 1);
      if (close === -1) fail('unterminated raw quoted string', i);
      push('string', source.slice(i + 1, close), i);
      i = close + 1;
    } else if (c === "'") {
      const { value, end } = lexQuoted(source, i, "'", fail);
      const chars = [...value];
      if (chars.length !== 1) {
        fail(`'${value}' is a Go character constant, which holds one character: use "double quotes" for strings`, i);
      }
      push('number', value, i, chars[0].codePointAt(0));
      i = end;
    } else if (c === '$') {
      let j = i + 1;
      while (j < source.length && IDENT_PART.test(source[j])) j++;
      push('variable', source.slice(i, j), i);
      i = j;
    } else if (c === '.' && IDENT_START.test(source[i + 1] ?? '')) {
      let j = i + 1;
      while (j < source.length && IDENT_PART.test(source[j])) j++;
      push('field', source.slice(i + 1, j), i);
      i = j;
    } else if (/[0-9]/.test(c) || ((c === '-' || c === '+' || c === '.') && /[0-9.]/.test(source[i + 1] ?? ''))) {
      const m =
        /^[+-]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][+-]?[0-9]+)?)/.exec(
          source.slice(i),
        )!;
      const literal = m[0];
      const value = parseNumber(literal);
      if (value === undefined || IDENT_PART.test(source[i + literal.length] ?? '')) {
        fail(`bad number syntax: "${source.slice(i).match(/^[^\s|()}]*/)![0]}"`, i);
      }
      push('number', literal, i, value);
      i += literal.length;
    } else if (c === '.') {
      push('dot', '.', i++);
    } else if (IDENT_START.test(c)) {
      let j = i;
      while (j < source.length && IDENT_PART.test(source[j])) j++;
      const word = source.slice(i, j);
      const type: TokenType =
        word === 'true' || word === 'false'
          ? 'bool'
          : word === 'nil'
            ? 'nil'
            : KEYWORDS.has(word)
              ? 'keyword'
              : 'identifier';
      push(type, word, i);
      i = j;
    } else {
      fail(`unexpected "${c}" in action`, i);
    }
  }
}

function parseNumber(literal: string): number | undefined {
  const clean = literal.replace(/_/g, '');
  const sign = clean.startsWith('-') ? -1 : 1;
  const body = clean.replace(/^[+-]/, '');
  let value: number;
  if (/^0[xX]/.test(body)) value = parseInt(body.slice(2), 16);
  else if (/^0[bB]/.test(body)) value = parseInt(body.slice(2), 2);
  else if (/^0[oO]/.test(body)) value = parseInt(body.slice(2), 8);
  else if (/^\.?[eE]|^\.$|^$/.test(body)) return undefined;
  else value = Number(body);
  return Number.isNaN(value) ? undefined : sign * value;
}

function lexQuoted(
  source: string,
  start: number,
  quote: string,
  fail: (message: string, offset: number) => never,
): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  for (;;) {
    const c = source[i];
    if (c === undefined || c === '\n') fail('unterminated quoted string', start);
    if (c === quote) return { value, end: i + 1 };
    if (c !== '\\') {
      value += c;
      i++;
      continue;
    }
    const e = source[i + 1];
    if (e !== undefined && e in ESCAPES) {
      value += ESCAPES[e];
      i += 2;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = source.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail(`invalid escape \\${e}${hex}`, i);
      value += String.fromCodePoint(parseInt(hex, 16));
      i += 2 + len;
    } else {
      fail(`unknown escape sequence \\${e ?? ''}`, i);
    }
  }
}
