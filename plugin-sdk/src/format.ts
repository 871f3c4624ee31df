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
