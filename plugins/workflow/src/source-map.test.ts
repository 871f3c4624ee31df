import { describe, expect, it } from 'vitest';
import { isMap, isScalar, LineCounter, parseDocument, type Scalar } from 'yaml';
import { ScalarLocator, SourceText } from './source-map.js';

/** The locator of the value under `key` in a one-level YAML mapping. */
function locator(text: string, key = 's'): ScalarLocator {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  if (!isMap(doc.contents)) throw new Error('not a map');
  const node = doc.contents.get(key, true) as Scalar;
  if (!isScalar(node) || typeof node.value !== 'string') throw new Error('not a string');
  return new ScalarLocator(new SourceText(text, lineCounter), node, node.value);
}

describe('ScalarLocator', () => {
  it('maps a literal block line for line, from the line after the header', () => {
    const l = locator('a: 1\ns: |  # a comment\n  one\n\n    two\n  three\nb: 2\n');
    expect(l.locate(1)).toEqual({ line: 3, column: 3 });
    expect(l.locate(2)).toEqual({ line: 4, column: 3 });
    expect(l.locate(3)).toEqual({ line: 5, column: 5 });
    expect(l.locate(3, 1)).toEqual({ line: 5, column: 3 });
    expect(l.locate(4, 3)).toEqual({ line: 6, column: 5 });
    expect(l.fileLines()).toEqual([3, 4, 5, 6]);
  });

  it('handles |- and leading blank lines', () => {
    const l = locator('s: |-\n\n   x\n   y');
    expect(l.fileLines()).toEqual([2, 3, 4]);
    expect(l.locate(2)).toEqual({ line: 3, column: 4 });
  });

  it('handles an explicit indentation indicator', () => {
    const l = locator('s: |2\n    indented\n  flush\n');
    expect(l.locate(1)).toEqual({ line: 2, column: 5 });
    expect(l.locate(2)).toEqual({ line: 3, column: 3 });
  });

  it('clamps lines past the end to the last line', () => {
    expect(locator('s: |\n  a\n  b\n').locate(9)).toEqual({ line: 3, column: 3 });
  });

  it('follows folding in a folded block', () => {
    // `one two` is one value line from two file lines; the blank line keeps a newline.
    const l = locator('s: >\n  one\n  two\n\n  three four\n');
    expect(l.lineCount).toBe(2);
    expect(l.locate(1, 5)).toEqual({ line: 3, column: 3 });
    expect(l.locate(2)).toEqual({ line: 5, column: 3 });
    expect(l.locate(2, 7)).toEqual({ line: 5, column: 9 });
    expect(l.fileLines()).toEqual([2, 5]);
  });

  it('maps a plain scalar on the key line and a multi-line plain scalar', () => {
    expect(locator('s: return {{ item }}').locate(1, 8)).toEqual({ line: 1, column: 11 });
    const l = locator('s: first\n  second\nb: 1');
    expect(l.locate(1, 7)).toEqual({ line: 2, column: 3 });
  });

  it('skips the quote and escapes of quoted scalars', () => {
    expect(locator('s: "a {{ x }}"').locate(1, 3)).toEqual({ line: 1, column: 7 });
    expect(locator("s: 'it''s {{ x }}'").locate(1, 6)).toEqual({ line: 1, column: 11 });
    const l = locator('s: "one\\ntwo {{ x }}"');
    expect(l.locate(2, 5)).toEqual({ line: 1, column: 14 });
  });

  it('places a blank line of a folded value from the line before it', () => {
    const l = locator('s: >\n  a\n\n\n  b\n');
    expect(l.fileLines()).toEqual([2, 3, 5]);
  });
});
