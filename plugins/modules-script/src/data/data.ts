import { createHash, createHmac, randomBytes, randomUUID, X509Certificate } from 'node:crypto';
import { luaType, type LuaModuleImplementation, type LuaValue } from '@runner/plugin-sdk';
import type { cryptoModule, jsonModule, yamlModule } from './spec.js';

function str(fn: string, value: unknown, position: number): string {
  if (typeof value !== 'string') throw new Error(`${fn}: argument ${position} must be a string, got ${luaType(value)}`);
  return value;
}

/** Drops what JSON and YAML cannot hold (Lua functions, handles), naming where. */
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
