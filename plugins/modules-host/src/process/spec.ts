import { defineLuaModule } from '@runner/plugin-sdk';

const match = { name: 'match', type: 'string (process name) | integer (pid)' };

/** Static declaration of the `process` module. */
export const processModule = defineLuaModule({
  name: 'process',
  description: 'Find, inspect and signal processes',
  docs: `
Reads /proc (Linux). A process matches a name when its command name (comm) is the name, or, with
opts.full = true, when its whole command line contains it.`,
  functions: {
    list: {
      args: [
        { name: 'match', type: 'string', optional: true },
        { name: 'opts', type: '{full?: boolean}', optional: true },
      ],
      result: '{pid, ppid, name, cmdline, uid, state}[]',
      description: 'The processes (those matching, when a name is given).',
      sideEffects: false,
      callsLua: false,
      example: `for _, p in ipairs(process.list("nginx")) do print(p.pid, p.cmdline) end`,
    },
    running: {
      args: [match, { name: 'opts', type: '{full?: boolean}', optional: true }],
      result: 'boolean',
      description: 'Whether a matching process (or that pid) exists.',
      sideEffects: false,
      callsLua: false,
      example: `if not process.running("sshd") then error("sshd is not running") end`,
    },
    kill: {
      args: [match, { name: 'opts', type: '{signal?: string, full?: boolean}', optional: true }],
      result: '{changed, pids: integer[]}',
      description: 'Sends the signal (default SIGTERM) to every matching process; changed when there was one.',
      sideEffects: true,
      callsLua: false,
      example: `process.kill("stuck-worker", { signal = "SIGKILL" })`,
    },
  },
});
