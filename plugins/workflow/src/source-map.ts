import type { LineCounter, Scalar } from 'yaml';

/** A 1-based line and column in the file. */
export interface LineColumn {
  line: number;
  column: number;
}

/** Offsets to 1-based lines and columns of one file's text. */
export class SourceText {
  constructor(
    readonly text: string,
    private readonly lines: LineCounter,
  ) {}

  position(offset: number): LineColumn {
    const { line, col } = this.lines.linePos(Math.max(0, Math.min(offset, this.text.length)));
    return { line, column: col };
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Maps positions inside a scalar's value (a script, a template) back to the file. A literal block
 * (`|`, `|-`, `|+`) keeps lines one to one, so its mapping is arithmetic. Folded blocks, plain and
 * quoted scalars rewrite whitespace (folding) and escapes, so for them each non-blank character of
 * the value is matched, in order, to the same character in the source: exact for everything but
 * escape sequences, where it may drift by a column. Should matching fail, everything maps to the
 * scalar's start, which is still the right neighbourhood.
 */
export class ScalarLocator {
  private readonly value: string;
  /** Index in `value` where each value line starts. */
  private readonly lineStarts: number[];
  /** For a literal block: file line of the value's first line and the content's indentation. */
  private literal?: { firstLine: number; indent: number };
  /** Source offset of each value character (-1 for blanks); undefined when matching failed. */
  private offsets?: Int32Array;
  private readonly start: LineColumn;

  constructor(
    private readonly source: SourceText,
    node: Scalar,
    value: string,
  ) {
    this.value = value;
    this.lineStarts = [0];
    // A final newline ends the last line; it does not start another (Lua counts lines the same way).
    for (let i = 0; i < value.length - 1; i++) if (value[i] === '\n') this.lineStarts.push(i + 1);
    const range = node.range ?? [0, 0, 0];
    this.start = source.position(range[0]);
    const text = source.text;

    if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
      const headerEnd = text.indexOf('\n', range[0]);
      const contentStart = headerEnd < 0 ? range[1] : headerEnd + 1;
      if (node.type === 'BLOCK_LITERAL') {
        this.literal = {
          firstLine: source.position(contentStart).line,
          indent: this.literalIndent(contentStart, range[1]),
        };
        return;
      }
      this.offsets = this.align(contentStart, range[1]);
    } else {
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      this.offsets = this.align(quoted ? range[0] + 1 : range[0], range[1]);
    }
  }

  /** Indentation of the block's content: that of its first non-blank line, less what the value keeps. */
  private literalIndent(contentStart: number, end: number): number {
    const text = this.source.text;
    const firstValueLine = this.value.split('\n').findIndex((l) => l.trim() !== '');
    if (firstValueLine < 0) return 0;
    let lineStart = contentStart;
    for (let n = 0; n < firstValueLine; n++) lineStart = text.indexOf('\n', lineStart) + 1;
    let sourceIndent = 0;
    while (lineStart + sourceIndent < end && text[lineStart + sourceIndent] === ' ') sourceIndent++;
    const valueLine = this.value.split('\n')[firstValueLine];
    const valueIndent = valueLine.length - valueLine.trimStart().length;
    return Math.max(0, sourceIndent - valueIndent);
  }

  private align(from: number, to: number): Int32Array | undefined {
    const text = this.source.text;
    const offsets = new Int32Array(this.value.length).fill(-1);
    let j = from;
    for (let i = 0; i < this.value.length; i++) {
      const c = this.value[i];
      if (WHITESPACE.has(c)) continue;
      while (j < to && text[j] !== c) j++;
      if (j >= to) return undefined;
      offsets[i] = j++;
    }
    return offsets;
  }

  /** Number of lines of the value. */
  get lineCount(): number {
    return this.lineStarts.length;
  }

  /**
   * File position of a 1-based line and column of the value (clamped into the value). Without a
   * column: the line's first non-blank character, where a reader looks for a line's content.
   */
  locate(line: number, column?: number): LineColumn {
    const l = Math.min(Math.max(1, Math.floor(line)), this.lineStarts.length);
    const lineStart = this.lineStarts[l - 1];
    const lineEnd =
      l < this.lineStarts.length ? this.lineStarts[l] - 1 : this.value.length - (this.value.endsWith('\n') ? 1 : 0);
    const text = this.value.slice(lineStart, lineEnd);
    const firstNonBlank = text.length - text.trimStart().length + 1;
    const c = column === undefined ? (text.trim() === '' ? 1 : firstNonBlank) : Math.max(1, Math.floor(column));
    if (this.literal) {
      return {
        line: this.literal.firstLine + l - 1,
        column: this.literal.indent + Math.min(c, lineEnd - lineStart + 1),
      };
    }
    const offsets = this.offsets;
    if (!offsets) return this.start;
    const at = Math.min(lineStart + c - 1, lineEnd);
    // The character asked for may be a blank; the nearest non-blank on the same line stands in.
    for (let i = at; i < lineEnd; i++) if (offsets[i] >= 0) return this.source.position(offsets[i]);
    for (let i = at - 1; i >= lineStart; i--) if (offsets[i] >= 0) return this.source.position(offsets[i]);
    // A blank line: count lines from the last non-blank character before it.
    for (let i = lineStart - 1; i >= 0; i--) {
      if (offsets[i] >= 0) {
        const before = this.source.position(offsets[i]);
        let newlines = 0;
        for (let k = i; k < lineStart; k++) if (this.value[k] === '\n') newlines++;
        return { line: before.line + newlines, column: 1 };
      }
    }
    return this.start;
  }

  /** File line of every value line: what the engine uses to place a script's run-time errors. */
  fileLines(): number[] {
    return this.lineStarts.map((_, i) => this.locate(i + 1).line);
  }
}
