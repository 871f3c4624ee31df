import type { TemplateEngine } from './types.js';

/** Tag delimiters per engine: Jinja has expressions, statements and comments; Go only `{{ }}`. */
const TAGS: Record<TemplateEngine, readonly (readonly [string, string, boolean])[]> = {
  // [open, close, is an expression]
  jinja: [
    ['{{', '}}', true],
    ['{%', '%}', false],
    ['{#', '#}', false],
  ],
  go: [['{{', '}}', true]],
};

/** Whether a string holds a template tag, and so is rendered rather than taken literally. */
export function hasTemplateTag(text: string, engine: TemplateEngine): boolean {
  return TAGS[engine].some(([open]) => text.includes(open));
}

/**
 * The script with each template tag blanked out, so that a Lua syntax check sees the code around
 * templates: an expression tag becomes `_` (a valid Lua name, so `local n = {{ vars.n }}` still
 * parses), other tags become spaces. Newlines inside tags are kept and every other character is
 * replaced one for one, so line numbers do not move.
 */
export function maskTemplates(script: string, engine: TemplateEngine): string {
  let out = '';
  let i = 0;
  while (i < script.length) {
    const tag = TAGS[engine].find(([open]) => script.startsWith(open, i));
    if (!tag) {
      out += script[i++];
      continue;
    }
    const [open, close, expression] = tag;
    const end = script.indexOf(close, i + open.length);
    if (end < 0) {
      // An unclosed tag is the template check's to report; leave the text as written.
      out += script.slice(i);
      break;
    }
    const inner = script.slice(i, end + close.length);
    const blank = inner.replace(/[^\n]/g, ' ');
    out += expression ? `_${blank.slice(1)}` : blank;
    i = end + close.length;
  }
  return out;
}

/**
 * Splits a variable path as a template plugin may report it: `vars.app`, `.vars.app` (Go),
 * `tasks["per-host"].outputs`, `tasks['a'].x`, `items[0]`. Returns undefined for template-local
 * names a Go template introduces (`$x`) and for the bare Go dot.
 */
export function splitVariablePath(path: string): string[] | undefined {
  let rest = path.trim();
  if (rest.startsWith('$')) return undefined;
  if (rest.startsWith('.')) rest = rest.slice(1);
  if (rest === '') return undefined;
  const segments: string[] = [];
  const pattern = /^(?:\.?([^.[\]]+)|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*'([^']*)'\s*\]|\[\s*([^\]]*?)\s*\])/;
  while (rest !== '') {
    const m = pattern.exec(rest);
    if (!m || m[0] === '') return segments.length > 0 ? segments : undefined;
    segments.push(m[1] ?? (m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? m[4])));
    rest = rest.slice(m[0].length);
  }
  return segments;
}

const FALSE_TEXTS = new Set(['', 'false', 'no', 'off', '0', 'none', 'null', 'nil']);

/**
 * Whether a rendered `when` holds: false for empty text and for false, no, off, 0, none, null and
 * nil (trimmed, any case), which is how Jinja, Go templates and Lua print their false values.
 */
export function conditionHolds(rendered: string): boolean {
  return !FALSE_TEXTS.has(rendered.trim().toLowerCase());
}
