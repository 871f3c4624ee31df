import { createHash, createHmac, randomBytes, randomUUID, X509Certificate } from 'node:crypto';
import { luaType, type LuaModuleImplementation, type LuaValue } from '@runner/plugin-sdk';
import type { TomlDate } from 'smol-toml';
import type { cryptoModule, iniModule, jsonModule, tomlModule, yamlModule } from './spec.js';

function str(fn: string, value: unknown, position: number): string {
  if (typeof value !== 'string') throw new Error(`${fn}: argument ${position} must be a string, got ${luaType(value)}`);
  return value;
}

/** Refuses what JSON, YAML, TOML and INI cannot hold (Lua functions, handles), naming where. */
function plain(fn: string, value: unknown, path = 'value'): unknown {
  if (value === null || value === undefined || typeof value !== 'object') {
    if (typeof value === 'function') throw new Error(`${fn}: ${path} is a function, which cannot be encoded`);
    return value;
  }
  if ((value as { kind?: unknown }).kind !== undefined)
    throw new Error(`${fn}: ${path} is a ${luaType(value)} that cannot be encoded`);
  if (Array.isArray(value)) return value.map((v, i) => plain(fn, v, `${path}[${i + 1}]`));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(fn, v, `${path}.${k}`)]));
}

export function createJsonModule(): LuaModuleImplementation<keyof typeof jsonModule.functions> {
  return {
    encode(_call, value, opts) {
      const indent = (opts as { indent?: unknown } | undefined)?.indent;
      return (
        JSON.stringify(plain('json.encode', value), null, typeof indent === 'number' ? indent : undefined) ?? 'null'
      );
    },
    decode(_call, text) {
      try {
        return JSON.parse(str('json.decode', text, 1)) as LuaValue;
      } catch (error) {
        throw new Error(`json.decode: ${(error as Error).message}`);
      }
    },
  };
}

export async function createYamlModule(): Promise<LuaModuleImplementation<keyof typeof yamlModule.functions>> {
  const YAML = await import('yaml');
  return {
    encode: (_call, value) => YAML.stringify(plain('yaml.encode', value)),
    decode(_call, text, opts) {
      const source = str('yaml.decode', text, 1);
      const docs = YAML.parseAllDocuments(source);
      for (const doc of docs) if (doc.errors.length > 0) throw new Error(`yaml.decode: ${doc.errors[0].message}`);
      const values = docs.map((d) => d.toJS() as LuaValue);
      return (opts as { all?: unknown } | undefined)?.all === true ? values : values[0];
    },
  };
}

/** A document-level table (TOML and INI files are keyed); an empty Lua table may arrive as `[]`. */
function keyed(fn: string, value: unknown): Record<string, unknown> {
  const table = plain(fn, value);
  if (Array.isArray(table) && table.length === 0) return {};
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw new Error(
      `${fn}: argument 1 must be a table with string keys, got ${luaType(value)}${Array.isArray(table) ? ' (a list)' : ''}`,
    );
  return table as Record<string, unknown>;
}

/** TOML dates and times as the ISO text they were written as; Lua has no date type. */
function isoDates(value: unknown, dateClass: typeof TomlDate): unknown {
  if (value instanceof dateClass) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => isoDates(v, dateClass));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isoDates(v, dateClass)]));
  return value;
}

export async function createTomlModule(): Promise<LuaModuleImplementation<keyof typeof tomlModule.functions>> {
  const TOML = await import('smol-toml');
  return {
    encode(_call, value) {
      const table = keyed('toml.encode', value);
      try {
        return TOML.stringify(table);
      } catch (error) {
        throw new Error(`toml.encode: ${(error as Error).message}`);
      }
    },
    decode(_call, text) {
      const source = str('toml.decode', text, 1);
      try {
        return isoDates(TOML.parse(source), TOML.TomlDate) as LuaValue;
      } catch (error) {
        if (!(error instanceof TOML.TomlError)) throw error;
        // The library's message carries a multi-line code frame; its first line is the reason.
        const reason = error.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
        throw new Error(`toml.decode: line ${error.line}, column ${error.column}: ${reason}`);
      }
    },
  };
}

/** INI lists hold scalars: the library would write a table inside one as "[object Object]". */
function iniScalarLists(table: Record<string, unknown>, path = 'value'): void {
  for (const [key, v] of Object.entries(table)) {
    if (Array.isArray(v)) {
      const i = v.findIndex((item) => typeof item === 'object' && item !== null);
      if (i >= 0) throw new Error(`ini.encode: ${path}.${key}[${i + 1}] is a table; INI lists hold only plain values`);
    } else if (typeof v === 'object' && v !== null) iniScalarLists(v as Record<string, unknown>, `${path}.${key}`);
  }
}

/**
 * The library skips or misreads lines it cannot parse; a broken section header would silently move
 * its keys into the previous section, so those (and keyless "=" lines) raise with their line number.
 */
function iniSyntaxCheck(source: string): void {
  for (const [i, line] of source.split(/\r\n|\r|\n/).entries()) {
    const trimmed = line.trim();
    if (trimmed.startsWith('[') && !/^\[[^\]]*\]\s*$/.test(line))
      throw new Error(
        `ini.decode: line ${i + 1}: a section header must be "[name]" alone on its line, got "${trimmed}"`,
      );
    if (trimmed.startsWith('=')) throw new Error(`ini.decode: line ${i + 1}: "=" with no key before it`);
  }
}

export async function createIniModule(): Promise<LuaModuleImplementation<keyof typeof iniModule.functions>> {
  const INI = (await import('ini')).default;
  return {
    encode(_call, value, opts) {
      const table = keyed('ini.encode', value);
      iniScalarLists(table);
      const o = (opts ?? {}) as { whitespace?: unknown; sort?: unknown };
      return INI.encode(table, { whitespace: o.whitespace === true, sort: o.sort === true });
    },
    decode(_call, text) {
      const source = str('ini.decode', text, 1);
      iniSyntaxCheck(source);
      return INI.decode(source) as LuaValue;
    },
  };
}

const ENCODINGS = ['hex', 'base64', 'base64url'] as const;

export function createCryptoModule(): LuaModuleImplementation<keyof typeof cryptoModule.functions> {
  return {
    hash(_call, algorithm, data) {
      try {
        return createHash(str('crypto.hash', algorithm, 1))
          .update(str('crypto.hash', data, 2), 'latin1')
          .digest('hex');
      } catch (error) {
        throw new Error(`crypto.hash: ${(error as Error).message}`);
      }
    },
    hmac: (_call, algorithm, key, data) =>
      createHmac(str('crypto.hmac', algorithm, 1), str('crypto.hmac', key, 2))
        .update(str('crypto.hmac', data, 3), 'latin1')
        .digest('hex'),
    random(_call, bytes, encoding) {
      if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 1 || bytes > 1024)
        throw new Error('crypto.random: argument 1 must be a whole number of bytes from 1 to 1024');
      const enc = (encoding ?? 'hex') as (typeof ENCODINGS)[number];
      if (!ENCODINGS.includes(enc)) throw new Error(`crypto.random: encoding must be one of ${ENCODINGS.join(', ')}`);
      return randomBytes(bytes).toString(enc);
    },
    uuid: () => randomUUID(),
    base64_encode: (_call, data) => Buffer.from(str('crypto.base64_encode', data, 1), 'latin1').toString('base64'),
    base64_decode: (_call, text) => Buffer.from(str('crypto.base64_decode', text, 1), 'base64').toString('latin1'),
    x509(_call, pem) {
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(str('crypto.x509', pem, 1));
      } catch (error) {
        throw new Error(`crypto.x509: not a PEM certificate (${(error as Error).message})`);
      }
      const notAfter = new Date(cert.validTo);
      return {
        subject: cert.subject.replace(/\n/g, ', '),
        issuer: cert.issuer.replace(/\n/g, ', '),
        serial: cert.serialNumber,
        not_before: new Date(cert.validFrom).toISOString(),
        not_after: notAfter.toISOString(),
        days_left: Math.floor((notAfter.getTime() - Date.now()) / 86_400_000),
        fingerprint_sha256: cert.fingerprint256,
        san: (cert.subjectAltName ?? '').split(', ').filter(Boolean),
        is_ca: cert.ca,
      };
    },
  };
}
