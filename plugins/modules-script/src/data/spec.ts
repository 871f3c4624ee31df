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

/** Static declaration of the `toml` module. */
export const tomlModule = defineLuaModule({
  name: 'toml',
  description: 'Encode Lua tables as TOML and decode TOML documents into Lua tables',
  docs: `
A TOML document is a table, so encode takes a table with string keys; nested tables become [sections]
and lists of tables [[arrays of tables]]. Dates and times decode to ISO 8601 strings as written: an
offset date-time keeps its offset ("1979-05-27T07:32:00.000-08:00"), a local date stays a date
("1979-05-27"), a local time a time ("07:32:00.000"). Encoding writes strings, so such a value comes
back quoted, not as a TOML date. Integers beyond 2^53 raise rather than lose digits.`,
  functions: {
    encode: {
      args: [{ name: 'value', type: 'table' }],
      result: 'string',
      description: 'The table as a TOML document; raises naming any value TOML cannot hold.',
      ...pure,
      example: `file.write("/etc/app/config.toml", toml.encode({ title = "web", server = { port = 8080 } }))`,
    },
    decode: {
      args: [{ name: 'text', type: 'string' }],
      result: 'table',
      description: 'The table the TOML text holds; raises naming the line and column of a syntax error.',
      ...pure,
      example: `local cargo = toml.decode(file.read("Cargo.toml"))
log.info("version", { version = cargo.package.version })`,
    },
  },
});

/** Static declaration of the `ini` module. */
export const iniModule = defineLuaModule({
  name: 'ini',
  description: 'Encode Lua tables as INI files and decode INI text into Lua tables',
  docs: `
Keys before the first [section] are top-level keys; each section is a nested table, and [a.b] is
section b inside a. Values decode as strings (numbers too), except true and false (booleans), a key
with no "=" (true) and null (nil, so the key disappears). "key[] = x" lines make a list. ";" and "#"
begin comments, except inside a value wholly in quotes (the quotes are removed). A section header
that is not "[name]" alone on its line, or a line with no key before "=", raises naming its line;
other lines are read leniently.`,
  functions: {
    encode: {
      args: [
        { name: 'value', type: 'table' },
        { name: 'opts', type: '{whitespace?: boolean, sort?: boolean}', optional: true },
      ],
      result: 'string',
      description:
        'The table as INI text: nested tables become sections, lists "key[]" lines; opts.whitespace writes "key = value", opts.sort sorts keys.',
      ...pure,
      example: `file.write("/etc/php.d/app.ini", ini.encode({ PHP = { memory_limit = "256M" } }, { whitespace = true }))`,
    },
    decode: {
      args: [{ name: 'text', type: 'string' }],
      result: 'table',
      description: 'The keys and sections of the INI text; raises naming the line of a malformed header.',
      ...pure,
      example: `local cfg = ini.decode(file.read("/etc/my.cnf"))
local port = tonumber(cfg.mysqld.port)`,
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
