import { defineLuaModule } from '@runner/plugin-sdk';

const wait = '{timeout?: duration, interval?: duration}';
const waited = 'number (seconds waited)';

/** Static declaration of the `wait_for` module. */
export const waitForModule = defineLuaModule({
  name: 'wait_for',
  description: 'Wait until a port, a file, an HTTP endpoint or a command is ready',
  docs: `
Each function checks at once, then every interval (default 1s) until the condition holds or the
timeout (default 60s) passes; it returns the seconds waited, or raises saying what it last saw.
Durations are "500ms", "30s", "2m" or seconds.`,
  functions: {
    port: {
      args: [
        { name: 'host', type: 'string' },
        { name: 'port', type: 'integer' },
        { name: 'opts', type: `${wait.slice(0, -1)}, state?: "open"|"closed"}`, optional: true },
      ],
      result: waited,
      description: 'Waits until a TCP connection to host:port succeeds (state = "closed": fails).',
      sideEffects: false,
      callsLua: false,
      example: `wait_for.port("127.0.0.1", 5432, { timeout = "30s" })`,
    },
    file: {
      args: [
        { name: 'path', type: 'string' },
        { name: 'opts', type: `${wait.slice(0, -1)}, state?: "present"|"absent", contains?: string}`, optional: true },
      ],
      result: waited,
      description: 'Waits until the file exists (and contains the text), or is gone with state = "absent".',
      sideEffects: false,
      callsLua: false,
      example: `wait_for.file("/var/run/app.pid")`,
    },
    http: {
      args: [
        { name: 'url', type: 'string' },
        { name: 'opts', type: `${wait.slice(0, -1)}, status?: integer, body_contains?: string}`, optional: true },
      ],
      result: waited,
      description: 'Waits until a GET of url answers with the status (default 200) and body text given.',
      sideEffects: false,
      callsLua: false,
      example: `wait_for.http("http://127.0.0.1:8080/health", { timeout = "2m" })`,
    },
    command: {
      args: [
        { name: 'cmd', type: 'string' },
        { name: 'opts', type: wait, optional: true },
      ],
      result: waited,
      description:
        'Runs cmd (/bin/sh -c) until it exits 0. Skipped in dry-run (returns 0): the command could change something.',
      sideEffects: true,
      callsLua: false,
      example: `wait_for.command("pg_isready -h 127.0.0.1")`,
    },
  },
});
