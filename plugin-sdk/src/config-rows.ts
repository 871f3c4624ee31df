import type { DeclaredConfigKey, RunnerConfig } from './config.js';
import { REDACTED, type Redactor } from './redactor.js';

/** One row of `runner config show`: a declared key with its effective value and where it came from. */
export interface ConfigRow {
  key: string;
  value: unknown;
  source: string;
  plugin: string;
  help: string;
  secret: boolean;
}

/**
 * Every declared key with its effective value. A `secret: true` key, or one whose name holds a
 * word the redactor treats as secret (`password`, `token`, ...), shows `***` when set; every value
 * also passes through the redactor, so a registered secret never prints inside another value.
 * Also the answer of `GET /api/v1/config` (plugins/ui), for the web UI's settings page: in the SDK
 * so that both read the one implementation without importing each other's files.
 */
export function configRows(ctx: { config: RunnerConfig; redactor: Redactor }): ConfigRow[] {
  return ctx.config.declared().map((entry: DeclaredConfigKey) => {
    // `api_token`, `tls_key_password`: a secret word anywhere in the key's last part.
    const lastPart = entry.key.slice(entry.key.lastIndexOf('.') + 1);
    const secret =
      entry.spec.secret === true ||
      ctx.redactor.isSecretKey(lastPart) ||
      lastPart.split(/[_-]/).some((word) => ctx.redactor.isSecretKey(word));
    const value =
      secret && entry.value !== undefined && entry.value !== '' ? REDACTED : ctx.redactor.redact(entry.value);
    return { key: entry.key, value, source: entry.source, plugin: entry.pluginId, help: entry.spec.help, secret };
  });
}
