/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions (`scirpt`). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j < cols; j++) d[0][j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** `dependsOn`, `Depends-On` and `depends_on` are the same word to a reader. */
function normalise(word: string): string {
  return word.toLowerCase().replace(/[-_\s]/g, '');
}

/**
 * The candidate nearest to `word`, or undefined when none is near enough to be a likely typo.
 * The allowance grows with the word's length, so short words only match close neighbours.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const allowed = word.length <= 3 ? 1 : word.length <= 6 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = normalise(candidate) === normalise(word) ? 0 : editDistance(word, candidate);
    if (distance <= allowed && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean "x"?)`, or an empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const near = closest(word, candidates);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}
