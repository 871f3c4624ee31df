import type { CommandContext, DeclaredConfigKey } from '@runner/plugin-sdk';

/** One row of `runner config show`: a declared key with its effective value and where it came from. */
export interface ConfigRow {
  key: string;
  value: unknown;
  source: string;
  plugin: string;
  help: string;
  secret: boolean;
}

const MASK = '[redacted]';

/**
 * Every declared key with its effective value. A `secret: true` key, or one whose name holds a
 * word the redactor treats as secret (`password`, `token`, ...), shows `[redacted]` when set; every value
 * also passes through the redactor, so a registered secret never prints inside another value.
 * Also the answer of `GET /api/v1/config` (plugins/ui), for the web UI's settings page.
 */
export function configRows(ctx: Pick<CommandContext, 'config' | 'redactor'>): ConfigRow[] {
  return ctx.config.declared().map((entry: DeclaredConfigKey) => {
    // `api_token`, `tls_key_password`: a secret word anywhere in the key's last part.
    const lastPart = entry.key.slice(entry.key.lastIndexOf('.') + 1);
    const secret =
      entry.spec.secret === true ||
      ctx.redactor.isSecretKey(lastPart) ||
      lastPart.split(/[_-]/).some((word) => ctx.redactor.isSecretKey(word));
    const value = secret && entry.value !== undefined && entry.value !== '' ? MASK : ctx.redactor.redact(entry.value);
    return { key: entry.key, value, source: entry.source, plugin: entry.pluginId, help: entry.spec.help, secret };
  });
}

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
