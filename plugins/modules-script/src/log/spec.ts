import { defineLuaModule, type LuaFunctionSpec } from '@runner/plugin-sdk';

const levels = ['debug', 'info', 'warn', 'error'] as const;

/** Static declaration of the `log` module: `runner modules info log` prints it. */
export const logModule = defineLuaModule({
  name: 'log',
  description: "Structured log lines from scripts into the run's log",
  docs: `
Lines go to the log of the task that runs the script (each line carries the workflow, task, run id
and agent the runtime attaches), or to the REPL's output. fields is a table of key = value pairs
stored with the line as structured data, not formatted into the message; nested tables are kept
as they are. Values under keys that look secret (password, token, secret, key...) are redacted by
the logger. A message that is not a string is converted as tostring would, a table as JSON.
Logging is not a side effect: it happens in dry-run too.`,
  functions: Object.fromEntries(
    levels.map((level) => [
      level,
      {
        args: [
          { name: 'msg', type: 'any' },
          { name: 'fields', type: 'table', optional: true },
        ],
        result: 'nil',
        callsLua: false,
        description: `Writes msg to the task's log at ${level} level, with fields as structured data.`,
        sideEffects: false,
        example:
          level === 'info'
            ? `log.info("deployed", { version = vars.version, hosts = 3 })`
            : level === 'warn'
              ? `log.warn("disk almost full", { mount = "/var", used_pct = 93 })`
              : level === 'error'
                ? `log.error("health check failed", { url = url, status = r.status })`
                : `log.debug("raw response", { body = body })`,
      },
    ]),
  ) as unknown as Record<(typeof levels)[number], LuaFunctionSpec>,
});

export type LogLevel = (typeof levels)[number];
export const LOG_LEVELS: readonly LogLevel[] = levels;
