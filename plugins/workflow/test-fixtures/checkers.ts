// Stand-ins for the checkers the Lua runtime and template plugins provide, so that this plugin's
// tests need neither. They do real (if small) work: positions come from the text they are given.
import type { ScriptChecker, TemplateVariableUse, TemplateVariablesReader } from '../src/types.js';

const KEYWORDS = new Set([
  'and',
  'or',
  'not',
  'in',
  'is',
  'if',
  'else',
  'elif',
  'endif',
  'for',
  'endfor',
  'set',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
  'eq',
  'ne',
  'lt',
  'gt',
  'le',
  'ge',
  'end',
  'range',
  'with',
  'len',
  'index',
  'printf',
]);

/** Reports the first line holding `@@` as a Lua syntax error, as fengari would word it. */
export const fakeCheckScript: ScriptChecker = (source) => {
  const lines = source.split('\n');
  const at = lines.findIndex((l) => l.includes('@@'));
  return at < 0 ? undefined : { line: at + 1, message: "unexpected symbol near '@'" };
};

/**
 * Free variables of `{{ }}` and `{% %}` tags: dotted names outside string literals, not after a
 * `|` (filters) and not keywords; `{% for x in ... %}` makes `x` local to the template.
 */
export const fakeTemplateVariables: TemplateVariablesReader = (source) => {
  const uses: TemplateVariableUse[] = [];
  const locals = new Set<string>();
  const tag = /\{\{-?([\s\S]*?)-?\}\}|\{%-?([\s\S]*?)-?%\}/g;
  for (let m = tag.exec(source); m; m = tag.exec(source)) {
    const inner = m[1] ?? m[2];
    const innerStart = m.index + m[0].indexOf(inner);
    // String literals are blanked, except subscripts such as tasks["per-host"], which are part of a path.
    const blanked = inner.replace(/(\[\s*)?("[^"]*"|'[^']*')/g, (s, subscript) =>
      subscript ? s : ' '.repeat(s.length),
    );
    const forLoop = /^\s*for\s+(\w+)\s+in\b/.exec(blanked);
    if (forLoop) locals.add(forLoop[1]);
    const name = /(^|[^\w.|\]])\s*(\.?[A-Za-z_]\w*(?:\.[\w-]+|\[[^\]]*\])*)/g;
    for (let n = name.exec(blanked); n; n = name.exec(blanked)) {
      const path = n[2];
      const root = path.replace(/^\./, '').split(/[.[]/)[0];
      if (KEYWORDS.has(root) || locals.has(root)) continue;
      if (/\|\s*$/.test(blanked.slice(0, n.index + n[1].length))) continue;
      const offset = innerStart + n.index + n[0].indexOf(path);
      const before = source.slice(0, offset);
      const line = before.split('\n').length;
      const column = offset - before.lastIndexOf('\n');
      uses.push({ path, line, column });
    }
  }
  return uses;
};
