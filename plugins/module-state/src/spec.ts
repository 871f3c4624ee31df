import { defineLuaModule } from '@runner/plugin-sdk';

/** Where a workflow or task scope points when the script runs outside a run (the REPL). */
export const OUTSIDE_RUN = '(repl)';

/** Static declaration of the `state` module: `runner modules info state` prints it. */
export const stateModule = defineLuaModule({
  name: 'state',
  description: 'Durable key/value state shared by runs of a workflow, by a task, or globally',
  docs: `
Values are strings, numbers, booleans or tables (stored as JSON, at most 1 MiB each) and survive
restarts: they live in the runner's store. Keys are non-empty strings of at most 512 characters.
opts.scope picks where a key lives:
  "workflow" (default)  shared by every run of the same workflow name
  "task"                this workflow and this task (the task's name as the run reports it)
  "global"              shared by every workflow
Outside a run (the REPL) the workflow and task scopes use the name "${OUTSIDE_RUN}".
Tables compare by content: key order does not matter, and an empty table equals an empty table
however it was built. Numbers are compared as numbers (1 and 1.0 are equal).
Calls on the same key run one after another where the state is kept (the master also orders its
agents' calls), so two goroutines, or one task fanned out to two agents, calling state.changed on
one key never both see the old value.
In dry-run nothing is stored: set and clear say what they would do, and changed still reports the
comparison. In a task delegated to an agent, every call goes to the master and runs on its store with
the same scopes: the workflow and task are those of the run the master delegated, and a later task
on the master sees what the agent stored. There every call waits for the master, so read into a
local first where Lua cannot wait (a table.sort comparator, a string.gsub callback).`,
  functions: {
    get: {
      args: [
        { name: 'key', type: 'string' },
        { name: 'opts', type: '{scope?: "workflow"|"task"|"global"}', optional: true },
      ],
      result: 'any',
      callsLua: false,
      description: 'Returns the stored value, or nil when the key has none.',
      sideEffects: false,
      example: `local last = state.get("last_deployed_version") or "none"`,
    },
    set: {
      args: [
        { name: 'key', type: 'string' },
        { name: 'value', type: 'any' },
        { name: 'opts', type: '{scope?: string}', optional: true },
      ],
      result: '{changed}',
      callsLua: false,
      description: `Stores value under key (durably: it returns once written to disk). changed tells whether the
stored value differed. Setting nil clears the key.`,
      sideEffects: true,
      example: `state.set("last_deployed_version", vars.version)
state.set("maintenance", true, { scope = "global" })`,
    },
    changed: {
      args: [
        { name: 'key', type: 'string' },
        { name: 'value', type: 'any' },
        { name: 'opts', type: '{scope?: string}', optional: true },
      ],
      result: 'boolean',
      callsLua: false,
      description: `True when value differs from the stored one (or none is stored); the new value is then stored.
False, and nothing written, when it is the same. The usual guard for "only act when the input
changed".`,
      sideEffects: true,
      example: `local cfg = file.read("/etc/app/app.conf")
if state.changed("app_conf", cfg, { scope = "task" }) then
  exec.run("systemctl reload app")
end`,
    },
    clear: {
      args: [
        { name: 'key', type: 'string' },
        { name: 'opts', type: '{scope?: string}', optional: true },
      ],
      result: '{changed}',
      callsLua: false,
      description: 'Removes the key; changed = false when it had no value.',
      sideEffects: true,
      example: `state.clear("maintenance", { scope = "global" })`,
    },
    keys: {
      args: [{ name: 'opts', type: '{scope?: string}', optional: true }],
      result: 'string[]',
      callsLua: false,
      description: 'The keys that have a value in the scope, sorted.',
      sideEffects: false,
      example: `for _, k in ipairs(state.keys({ scope = "global" })) do log.info(k) end`,
    },
  },
});

export type StateFunction = keyof typeof stateModule.functions;
