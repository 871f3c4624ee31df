import type { ConfigRow } from '@runner/plugin-sdk';

/** `runner config show`'s table: key, value (`(unset)`), source and help. */
export function configTable(rows: readonly ConfigRow[]): string {
  const shown = rows.map((r) => ({ ...r, text: r.value === undefined ? '(unset)' : formatValue(r.value) }));
  const keyWidth = Math.max(3, ...shown.map((r) => r.key.length));
  const valueWidth = Math.min(40, Math.max(5, ...shown.map((r) => r.text.length)));
  const sourceWidth = Math.min(40, Math.max(6, ...shown.map((r) => r.source.length)));
  const line = (k: string, v: string, s: string, h: string) =>
    `${k.padEnd(keyWidth)}  ${v.padEnd(valueWidth)}  ${s.padEnd(sourceWidth)}  ${h}`.trimEnd();
  return [line('KEY', 'VALUE', 'SOURCE', 'HELP'), ...shown.map((r) => line(r.key, r.text, r.source, r.help))]
    .map((l) => `${l}\n`)
    .join('');
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (Array.isArray(value)) return value.map(String).join(',');
  if (value !== null && typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',');
  return String(value);
}
