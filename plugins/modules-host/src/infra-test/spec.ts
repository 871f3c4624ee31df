import { defineLuaModule } from '@runner/plugin-sdk';

const assertions = {
  name: 'assertions',
  type: 'table[]: {file, exists?, mode?, owner?, group?, contains?} | {port, listening?} | {service, running?} | {package, installed?} | {http, status?, body_contains?} | {command, exit_code?, stdout_contains?}',
};

/** Static declaration of the `infra_test` module: `runner modules info infra_test` prints it. */
export const infraTestModule = defineLuaModule({
  name: 'infra_test',
  description: 'Assertions on the host in the style of testinfra: files, ports, services, packages, HTTP, commands',
  docs: `
Each assertion is a table naming what it looks at and what it expects:
  { file = "/etc/app.conf", exists = true, mode = "0644", owner = "root", group = "root", contains = "port=8080" }
  { port = 8080, listening = true }           -- a TCP socket listening on the port (/proc/net/tcp, tcp6)
  { service = "nginx", running = true }       -- systemctl is-active (fails where systemd is not running)
  { package = "curl", installed = true }      -- the detected package manager (pkg)
  { http = "http://127.0.0.1:8080/health", status = 200, body_contains = "ok", timeout = "5s" }
  { command = "app --version", exit_code = 0, stdout_contains = "1.4" }   -- /bin/sh -c
exists, listening, running and installed default to true. Every assertion is checked (none stops
the others) and each failure says what was found. Commands are skipped in dry-run (they could
change something); the rest only read.`,
  functions: {
    verify: {
      args: [assertions],
      result: '{passed: integer}',
      description:
        'Checks every assertion; raises when any failed, listing every failure ("3 of 7 assertions failed: ...").',
      sideEffects: false,
      callsLua: false,
      example: `infra_test.verify({
  { file = "/etc/app.conf", mode = "0644", contains = "port=8080" },
  { package = "nginx" },
  { port = 8080 },
  { http = "http://127.0.0.1:8080/health", status = 200 },
})`,
    },
    check: {
      args: [assertions],
      result: '{ok: boolean, passed: integer, failures: string[]}',
      description: 'Checks every assertion like verify, but returns the failures instead of raising.',
      sideEffects: false,
      callsLua: false,
      example: `local r = infra_test.check({ { service = "nginx" } })
if not r.ok then log.warn("checks failed", { failures = r.failures }) end`,
    },
  },
});
