/**
 * Where each line of a virtualised log sits: a message of n text lines (it holds n-1 newlines)
 * takes n rows, so a multi-line message never overlaps the next line; with `columns` (characters
 * a row of the message holds, in a monospace font) a text line longer than that wraps onto more
 * rows, and `extra` rows go before each message (the time and level above it on a phone; a
 * function of the line's index when they differ by line). `tops` has one entry more than
 * `messages`: the last is the height of the whole log.
 */
export function layoutRows(
  messages: readonly string[],
  row: number,
  columns = Infinity,
  extra: number | ((index: number) => number) = 0,
): number[] {
  const tops = new Array<number>(messages.length + 1);
  const extraAt = typeof extra === 'number' ? () => extra : extra;
  let top = 0;
  for (let i = 0; i < messages.length; i++) {
    tops[i] = top;
    top += row * (extraAt(i) + textRows(messages[i] as string, Math.max(1, columns)));
  }
  tops[messages.length] = top;
  return tops;
}

/** Rows a message takes: each of its text lines, wrapped every `columns` characters. */
export function textRows(message: string, columns: number): number {
  let rows = 0;
  let start = 0;
  for (;;) {
    const end = message.indexOf('\n', start);
    const length = (end === -1 ? message.length : end) - start;
    rows += length <= columns ? 1 : Math.ceil(length / columns);
    if (end === -1) return rows;
    start = end + 1;
  }
}

/** The index of the line at `y` pixels (the last line when `y` is past the end). */
export function lineAt(tops: readonly number[], y: number): number {
  let low = 0;
  let high = tops.length - 2;
  if (high < 0) return 0;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((tops[mid] as number) <= y) low = mid;
    else high = mid - 1;
  }
  return low;
}
