import type { FlowDiff } from './types';

/** One row of a side-by-side diff: the old line on the left, the new on the right (either may be empty). */
export interface DiffRow {
  left?: { line: number; text: string; removed: boolean };
  right?: { line: number; text: string; added: boolean };
}

/**
 * The diff's lines as rows: unchanged lines on both sides; a block of removed lines beside the
 * block of added lines that follows it (a changed line faces its new form), the longer one padded.
 */
export function sideBySide(lines: FlowDiff['lines']): DiffRow[] {
  const rows: DiffRow[] = [];
  let removed: DiffRow['left'][] = [];
  let added: DiffRow['right'][] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) rows.push({ left: removed[i], right: added[i] });
    removed = [];
    added = [];
  };
  for (const l of lines) {
    if (l.kind === 'removed') {
      if (added.length) flush();
      removed.push({ line: l.old ?? 0, text: l.text, removed: true });
    } else if (l.kind === 'added') added.push({ line: l.new ?? 0, text: l.text, added: true });
    else {
      flush();
      rows.push({
        left: { line: l.old ?? 0, text: l.text, removed: false },
        right: { line: l.new ?? 0, text: l.text, added: false },
      });
    }
  }
  flush();
  return rows;
}
