/** An error's message, or the thrown value as a string when it is not an Error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * At most `max` characters of a text a client or a workflow sent, for an error message: an answer
 * never echoes a large input back (it would amplify a request and may carry what others typed).
 */
export function excerpt(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `512 B`, `1.5 KiB`, `12 MiB` (binary units, one decimal under 10); `-` for a non-finite value. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-';
  if (Math.abs(bytes) < 1024) return `${Math.round(bytes)} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(Math.abs(value) < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

/**
 * Seconds as JSON shows them: to the microsecond, so a duration reads `0.036511`, not the float
 * noise of a subtraction (`0.036510582000000055`).
 */
export function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}

/** A text table: left-aligned columns separated by two spaces, the last column not padded. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/**
 * An empty map for keys that come from users (task, var, group, agent and output names): it has no
 * prototype, so `__proto__` is stored as an entry instead of replacing the prototype, and a name
 * such as `constructor` or `toString` that is absent reads as undefined, not as Object's method.
 */
export function userKeyed<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
