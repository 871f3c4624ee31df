/**
 * Where each line of a virtualised log sits: a message of n text lines (it holds n-1 newlines)
 * takes n rows, so a multi-line message never overlaps the next line. `tops` has one entry more
 * than `messages`: the last is the height of the whole log.
 */
export function layoutRows(messages: readonly string[], row: number): number[] {
  const tops = new Array<number>(messages.length + 1);
  let top = 0;
  for (let i = 0; i < messages.length; i++) {
    tops[i] = top;
    top += row * textLines(messages[i] as string);
  }
  tops[messages.length] = top;
  return tops;
}

function textLines(message: string): number {
  let lines = 1;
  for (let at = message.indexOf('\n'); at !== -1; at = message.indexOf('\n', at + 1)) lines++;
  return lines;
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
