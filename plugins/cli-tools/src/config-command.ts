import { configRows, type CommandContext } from '@runner/plugin-sdk';

/** `runner config show`: a table, or one JSON object a key with `--output json`. */
export function showConfig(ctx: CommandContext, json: boolean): number {
  const rows = configRows(ctx);
  if (json) {
    for (const row of rows) ctx.stdout.write(`${JSON.stringify(row)}\n`);
    return 0;
  }
  const shown = rows.map((r) => ({ ...r, text: r.value === undefined ? '(unset)' : formatValue(r.value) }));
  const keyWidth = Math.max(3, ...shown.map((r) => r.key.length));
  const valueWidth = Math.min(40, Math.max(5, ...shown.map((r) => r.text.length)));
  const sourceWidth = Math.min(40, Math.max(6, ...shown.map((r) => r.source.length)));
  const line = (k: string, v: string, s: string, h: string) =>
    `${k.padEnd(keyWidth)}  ${v.padEnd(valueWidth)}  ${s.padEnd(sourceWidth)}  ${h}`.trimEnd();
  ctx.stdout.write(`${line('KEY', 'VALUE', 'SOURCE', 'HELP')}\n`);
  for (const r of shown) ctx.stdout.write(`${line(r.key, r.text, r.source, r.help)}\n`);
  return 0;
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
