import { defineLuaModule } from '@runner/plugin-sdk';

/** The `net` module's declaration: what `runner modules info net` prints. Kept free of Node imports. */
export const netModule = defineLuaModule({
  name: 'net',
  description: 'HTTP requests, file downloads, TCP port checks and DNS lookups',
  docs: `
Durations (timeout, interval) are "<number><unit>" with unit ms, s, m, h or d ("5s", "500ms"),
or a number of seconds. Time limits also end when the task times out or the run is cancelled.
HTTP functions follow redirects. Connection failures and time-outs raise an error naming the URL;
an HTTP error status (404, 500...) does not raise: check the result's "ok".
Response bodies are text (decoded with the response's charset, UTF-8 by default) and cut at
10 MiB (then truncated = true); use net.download for large or binary files.
Unknown option names raise an error, so a misspelt option is never silently ignored.
Credentials in a URL (http://user:pass@host/) are sent as basic authentication, and the
password shows as *** in errors and results. Like browsers, HTTP requests refuse ports of other
protocols (22, 25, 6000...); net.port_open can still check those.
`,
  functions: {
    get: {
      args: [
        { name: 'url', type: 'string' },
        { name: 'opts', type: '{headers?: table, timeout?: duration, query?: table}', optional: true },
      ],
      result: 'table',
      callsLua: false,
      description: [
        'Sends a GET request. opts.query adds URL parameters (a list value repeats the name);',
        'opts.headers sets request headers; opts.timeout limits the whole exchange (default 30s).',
        'Returns {status, status_text, ok, headers, body, json, truncated, url, duration}:',
        'ok is true for 2xx; headers has lower-case names (several Set-Cookie lines are joined by "\\n");',
        'json is the decoded body when the response is JSON (else nil; json_error says why it did not',
        'parse); url is the final URL after redirects; duration is in seconds.',
        'Raises only when no response arrives (connection refused, DNS failure, time-out).',
      ].join('\n'),
      sideEffects: false,
      example: `
local r = net.get("http://127.0.0.1:8080/api/items", { query = { page = 2 }, timeout = "5s" })
if not r.ok then error("items: HTTP " .. r.status) end
for _, item in ipairs(r.json) do log.info(item.name) end`,
    },
    post: {
      args: [
        { name: 'url', type: 'string' },
        { name: 'body', type: 'string|table|nil' },
        { name: 'opts', type: '{headers?: table, timeout?: duration, json?: boolean}', optional: true },
      ],
      result: 'table',
      callsLua: false,
      description: [
        'Sends a POST request and returns the same table as net.get.',
        'A table body is sent as JSON (Content-Type: application/json); with json = false it is sent',
        'as a form (application/x-www-form-urlencoded). A string body is sent as it is (text/plain)',
        'unless json = true, which encodes any body as JSON. A Content-Type in opts.headers wins.',
        'Dry-run: sends nothing and returns {skipped = true, ok = true, note = "dry-run: would POST ..."}.',
      ].join('\n'),
      sideEffects: true,
      example: `
local r = net.post("http://127.0.0.1:8080/hooks/deploy", { version = "1.4.2", env = "prod" },
  { headers = { Authorization = "Bearer " .. env.TOKEN } })
if not r.ok then error("deploy hook answered " .. r.status .. ": " .. r.body) end`,
    },
    download: {
      args: [
        { name: 'url', type: 'string' },
        { name: 'dest', type: 'string' },
        {
          name: 'opts',
          type: '{mode?: string, checksum?: string, timeout?: duration, headers?: table}',
          optional: true,
        },
      ],
      result: 'table',
      callsLua: false,
      description: [
        'Downloads url to the file dest (its directory must exist). The body is written to a temp file',
        'beside dest, flushed, then renamed over it, so dest is never half-written.',
        'Returns {changed, path, bytes, sha256, duration}; changed is false when dest already had that',
        'content (and mode). opts.checksum = "sha256:<hex>" is verified before the rename: a mismatch',
        'raises and leaves dest as it was; when dest already matches it, nothing is requested at all.',
        'opts.mode is an octal string ("0644"; Lua has no octal numbers); without it a replaced file keeps',
        'its mode. An HTTP status other than 2xx raises ("... answered 404"). Default timeout 10m.',
        "Relative dest paths resolve against the runner process's working directory.",
        'Dry-run: requests and writes nothing; returns {skipped = true, path, note}, with changed = true',
        'when a checksum shows the file would change, or changed = false when dest already matches it.',
      ].join('\n'),
      sideEffects: true,
      example: `
local r = net.download("http://127.0.0.1:8080/tool-1.2.tar.gz", "/opt/tool/tool-1.2.tar.gz",
  { checksum = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", mode = "0644" })
if r.changed then exec.run({ "tar", "-xzf", r.path, "-C", "/opt/tool" }) end`,
    },
    port_open: {
      args: [
        { name: 'host', type: 'string' },
        { name: 'port', type: 'integer' },
        { name: 'timeout', type: 'duration', optional: true },
      ],
      result: 'boolean',
      callsLua: false,
      description: [
        'Tries one TCP connection; true when it is accepted. False when it is refused, unreachable,',
        'unanswered within timeout (default 5s) or when host does not resolve; the reason goes to the',
        'debug log. Nothing is sent over the connection.',
      ].join('\n'),
      sideEffects: false,
      example: `
if not net.port_open("127.0.0.1", 5432, "2s") then error("postgres is not listening") end`,
    },
    wait_for_port: {
      args: [
        { name: 'host', type: 'string' },
        { name: 'port', type: 'integer' },
        { name: 'opts', type: '{timeout?: duration, interval?: duration, state?: "open"|"closed"}', optional: true },
      ],
      result: 'number',
      callsLua: false,
      description: [
        'Tries to connect every interval (default 1s) until the port is open (or, with',
        'state = "closed", until it no longer accepts connections). Returns the seconds it waited.',
        'Raises when timeout (default 60s) passes first, naming the port, the attempts and the last error.',
      ].join('\n'),
      sideEffects: false,
      example: `
exec.run("systemctl start myapp")
local waited = net.wait_for_port("127.0.0.1", 8080, { timeout = "30s", interval = "500ms" })
log.info("myapp is up", { after = waited })`,
    },
    lookup: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'opts', type: '{family?: 4|6|"ipv4"|"ipv6"|"any"}', optional: true },
      ],
      result: 'string[]',
      callsLua: false,
      description: [
        'Resolves name with the system resolver (as other programs on the host do: /etc/hosts, DNS...)',
        'and returns its addresses, without duplicates. opts.family keeps IPv4 or IPv6 addresses only.',
        'Raises when the name does not resolve ("... does not resolve (ENOTFOUND)").',
      ].join('\n'),
      sideEffects: false,
      example: `
local addrs = net.lookup("localhost", { family = 4 })
log.info("localhost is " .. addrs[1])`,
    },
  },
});

export type NetFunction = keyof typeof netModule.functions;
