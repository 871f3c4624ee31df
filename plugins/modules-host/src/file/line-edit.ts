/** What `file.line_in_file` should do; validated by the caller. */
export interface LineSpec {
  line?: string;
  regexp?: RegExp;
  state: 'present' | 'absent';
  /** Insert a new line after the last line matching this (or at the end for "EOF"). */
  insertAfter?: RegExp | 'EOF';
  /** Insert a new line before the last line matching this (or at the start for "BOF"). */
  insertBefore?: RegExp | 'BOF';
}

export interface LineEdit {
  content: string;
  /** replaced / inserted / removed / none */
  action: 'replaced' | 'inserted' | 'removed' | 'none';
  /** Lines removed (state absent). */
  removed: number;
  /** 1-based line touched (replaced or inserted). */
  lineNumber?: number;
}

function lastIndexMatching(lines: string[], re: RegExp): number {
  for (let i = lines.length - 1; i >= 0; i--) if (re.test(lines[i])) return i;
  return -1;
}

/**
 * Ansible's lineinfile, on text: with `regexp`, the last matching line is replaced (when none
 * matches, the line is inserted unless it is already there); without, the line is inserted when
 * absent. `absent` removes every line matching `regexp`, or equal to `line`. The file's line
 * ending (LF or CRLF) is kept, and a file that ended with a newline still does.
 */
export function editLines(original: string, spec: LineSpec): LineEdit {
  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  const endsWithNewline = original === '' || original.endsWith('\n');
  const lines = original === '' ? [] : original.split(/\r?\n/);
  if (endsWithNewline && lines.length > 0) lines.pop();
  const join = (ls: string[], trailing: boolean): string =>
    ls.length === 0 ? '' : ls.join(eol) + (trailing ? eol : '');

  if (spec.state === 'absent') {
    const keep = lines.filter((l) => !(spec.regexp ? spec.regexp.test(l) : l === spec.line));
    const removed = lines.length - keep.length;
    if (removed === 0) return { content: original, action: 'none', removed: 0 };
    return { content: join(keep, endsWithNewline), action: 'removed', removed };
  }

  const line = spec.line!;
  if (spec.regexp) {
    const at = lastIndexMatching(lines, spec.regexp);
    if (at !== -1) {
      if (lines[at] === line) return { content: original, action: 'none', removed: 0, lineNumber: at + 1 };
      lines[at] = line;
      return { content: join(lines, endsWithNewline), action: 'replaced', removed: 0, lineNumber: at + 1 };
    }
  }
  const existing = lines.indexOf(line);
  if (existing !== -1) return { content: original, action: 'none', removed: 0, lineNumber: existing + 1 };

  let at = lines.length;
  if (spec.insertBefore === 'BOF') at = 0;
  else if (spec.insertBefore) {
    const i = lastIndexMatching(lines, spec.insertBefore);
    if (i !== -1) at = i;
  } else if (spec.insertAfter && spec.insertAfter !== 'EOF') {
    const i = lastIndexMatching(lines, spec.insertAfter);
    if (i !== -1) at = i + 1;
  }
  lines.splice(at, 0, line);
  // Appending to a file without a final newline adds one: the new last line is complete.
  const trailing = endsWithNewline || at === lines.length - 1;
  return { content: join(lines, trailing), action: 'inserted', removed: 0, lineNumber: at + 1 };
}
