/** `key=value` lines to a run's vars; a line without `=` is named in the error. */
export function parseVars(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .forEach((line, i) => {
      const at = line.indexOf('=');
      if (at <= 0) throw new Error(`vars line ${i + 1}: "${line}" is not key=value`);
      out[line.slice(0, at).trim()] = line.slice(at + 1);
    });
  return out;
}
