import { createTwoFilesPatch, diffLines as lineChanges } from 'diff';

/** One line of a diff, numbered on each side it belongs to: what a side-by-side view draws. */
export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  /** Its line number in the old text (absent for an added line). */
  old?: number;
  /** Its line number in the new text (absent for a removed line). */
  new?: number;
  text: string;
}

export interface FlowDiff {
  /** The unified diff (`git diff` style), for terminals and files. */
  unified: string;
  lines: DiffLine[];
  added: number;
  removed: number;
}

/** The line diff of two versions' YAML, both as a unified patch and as numbered lines. */
export function diffLines(before: string, after: string, beforeLabel: string, afterLabel: string): FlowDiff {
  const lines: DiffLine[] = [];
  let oldLine = 1;
  let newLine = 1;
  let added = 0;
  let removed = 0;
  for (const part of lineChanges(before, after)) {
    const texts = part.value.replace(/\n$/, '').split('\n');
    for (const text of texts) {
      if (part.added) lines.push({ kind: 'added', new: newLine++, text });
      else if (part.removed) lines.push({ kind: 'removed', old: oldLine++, text });
      else lines.push({ kind: 'same', old: oldLine++, new: newLine++, text });
    }
    if (part.added) added += texts.length;
    if (part.removed) removed += texts.length;
  }
  return { unified: createTwoFilesPatch(beforeLabel, afterLabel, before, after, '', ''), lines, added, removed };
}
