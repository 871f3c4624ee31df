import { defineLuaModule } from '@runner/plugin-sdk';

const pure = { sideEffects: false, callsLua: false } as const;

/** Static declaration of the `json` module. */
export const jsonModule = defineLuaModule({
  name: 'json',
  description: 'Encode Lua values as JSON and decode JSON into Lua values',
  docs: `
A table with keys 1..n (or an empty table) encodes as an array, any other as an object. JSON null
decodes to nil (so it disappears from tables). Numbers that are whole stay integers.`,
  functions: {
    encode: {
      args: [
        { name: 'value', type: 'any' },
        { name: 'opts', type: '{indent?: integer}', optional: true },
      ],
      result: 'string',
      description: 'The value as JSON text; opts.indent pretty-prints with that many spaces.',
      ...pure,
      example: `local body = json.encode({ app = "web", replicas = 3 })`,
    },
    decode: {
      args: [{ name: 'text', type: 'string' }],
      result: 'any',
      description: 'The value the JSON text holds; raises naming the position of a syntax error.',
      ...pure,
      example: `local data = json.decode(net.get(url).body)`,
    },
  },
});

/** Static declaration of the `yaml` module. */
export const yamlModule = defineLuaModule({
  name: 'yaml',
  description: 'Encode Lua values as YAML and decode YAML documents into Lua values',
  functions: {
    encode: {
      args: [{ name: 'value', type: 'any' }],
      result: 'string',
      description: 'The value as a YAML document.',
      ...pure,
      example: `file.write("/etc/app/config.yaml", yaml.encode({ port = 8080, hosts = { "a", "b" } }))`,
    },
    decode: {
      args: [
        { name: 'text', type: 'string' },
        { name: 'opts', type: '{all?: boolean}', optional: true },
      ],
      result: 'any',
      description: 'The value of the (first) YAML document; with opts.all = true, a list of every document.',
      ...pure,
      example: `local manifest = yaml.decode(file.read("deploy.yaml"))`,
    },
  },
});

/** Static declaration of the `crypto` module. */
export const cryptoModule = defineLuaModule({
  name: 'crypto',
  description: 'Hashes, HMACs, random values, base64 and X.509 certificate inspection',
  functions: {
    hash: {
      args: [
        { name: 'algorithm', type: '"sha256"|"sha512"|"sha1"|"md5"|...' },
        { name: 'data', type: 'string' },
      ],
      result: 'string (hex)',
      description: 'The digest of data in hex (any algorithm node:crypto knows).',
      ...pure,
      example: `local sum = crypto.hash("sha256", file.read("/srv/app.tgz"))`,
    },
    hmac: {
      args: [
        { name: 'algorithm', type: 'string' },
        { name: 'key', type: 'string' },
        { name: 'data', type: 'string' },
      ],
      result: 'string (hex)',
      description: 'The HMAC of data with key, in hex.',
      ...pure,
      example: `local sig = crypto.hmac("sha256", vars.secret, body)`,
    },
    random: {
      args: [
        { name: 'bytes', type: 'integer' },
        { name: 'encoding', type: '"hex"|"base64"|"base64url"', optional: true },
      ],
      result: 'string',
      description: 'That many random bytes (at most 1024) from the system CSPRNG, encoded (hex by default).',
      ...pure,
      example: `local token = crypto.random(32, "base64url")`,
    },
    uuid: {
      args: [],
      result: 'string',
      description: 'A random (version 4) UUID.',
      ...pure,
      example: `local id = crypto.uuid()`,
    },
    base64_encode: {
      args: [{ name: 'data', type: 'string' }],
      result: 'string',
      description: 'data in base64.',
      ...pure,
      example: `local auth = "Basic " .. crypto.base64_encode(user .. ":" .. pass)`,
    },
    base64_decode: {
      args: [{ name: 'text', type: 'string' }],
      result: 'string',
      description: 'The bytes base64 (or base64url) text stands for.',
      ...pure,
      example: `local raw = crypto.base64_decode(secret_b64)`,
    },
    x509: {
      args: [{ name: 'pem', type: 'string' }],
      result: '{subject, issuer, serial, not_before, not_after, days_left, fingerprint_sha256, san: string[], is_ca}',
      description:
        'What the (first) PEM certificate says: names, validity (ISO dates; days_left from now), fingerprint.',
      ...pure,
      example: `local cert = crypto.x509(file.read("/etc/ssl/certs/site.pem"))
if cert.days_left < 14 then notifications.slack(vars.hook, "certificate expires soon") end`,
    },
  },
});
