import { readFileSync } from 'node:fs';
import { InvalidInputError, resourceCommand, type ActionInput, type CommandSpec } from '@runner/plugin-sdk';
import {
  deleteHooksId,
  getHookEvents,
  getHooks,
  getHooksId,
  getHooksIdHistory,
  postHooks,
  postHooksIdDisable,
  postHooksIdEnable,
  postHooksIdTest,
  putHooksId,
} from './api.js';

type Row = Record<string, unknown>;

const scriptOption = { flags: '--script <file>', description: 'the Lua script (a file; - reads stdin)' };
const eventOption = {
  flags: '--event <event>',
  description: 'the event it runs on: workflow.failed, task.*, ... (runner hook events lists them)',
};
const payloadOption = {
  flags: '--payload <json>',
  description: 'the payload as JSON (default: a sample of the event)',
};

function readScript(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new InvalidInputError(`--script: cannot read ${file}: ${(error as Error).message}`, { field: 'script' });
  }
}

/** `--event` and `--script <file>` as the body's `event_type` and `script`. */
function scriptBody(input: ActionInput): Row {
  const body: Row = {};
  if (typeof input.options.event === 'string') body.event_type = input.options.event;
  if (typeof input.options.script === 'string') body.script = readScript(input.options.script);
  return body;
}

const rate = (row: Row) => (row.success_rate === null ? '-' : `${String(row.success_rate)}%`);
const showHook = (hook: Row) =>
  `id:          ${String(hook.id)}\nname:        ${String(hook.name)}\nevent:       ${String(hook.event_type)}\n` +
  `enabled:     ${hook.enabled ? 'yes' : 'no'}\npriority:    ${String(hook.priority)}\ntimeout:     ${String(hook.timeout)} s\n` +
  `retries:     ${String(hook.retries)}\nexecutions:  ${String(hook.executions)} (${rate(hook)} succeeded)\n` +
  `script:\n${String(hook.script).replace(/^/gm, '  ')}\n`;

/** `runner hook list|add|get|update|remove|enable|disable|history|test`: each one of the plugin's routes. */
export const hookCommand: CommandSpec = resourceCommand({
  name: 'hook',
  aliases: ['hooks'],
  description: 'Lua hooks that run on events (workflow.failed, task.*, ...) in priority order',
  actions: [
    {
      name: 'list',
      aliases: ['ls'],
      route: getHooks,
      description: 'hooks in the order they run',
      rows: 'hooks',
      empty: 'no hooks (add one with runner hook add <name> --event <event> --script <file>)',
      columns: [
        { header: 'ID', field: 'id' },
        { header: 'NAME', field: 'name' },
        { header: 'EVENT', field: 'event_type' },
        { header: 'PRIORITY', field: 'priority' },
        { header: 'ENABLED', value: (h) => (h.enabled ? 'yes' : 'no') },
        { header: 'EXECUTIONS', field: 'executions' },
        { header: 'SUCCESS', value: rate },
      ],
    },
    {
      name: 'add',
      route: postHooks,
      description: 'add a hook: runner hook add <name> --event <event> --script <file> [--priority n]',
      positional: ['name'],
      omit: ['event_type', 'script'],
      options: [eventOption, scriptOption],
      body: scriptBody,
      text: (hook: Row) => `hook ${String(hook.name)} (#${String(hook.id)}) added on ${String(hook.event_type)}\n`,
    },
    { name: 'get', aliases: ['show'], route: getHooksId, text: showHook },
    {
      name: 'events',
      route: getHookEvents,
      description: 'the events and patterns a hook may name (--event)',
      rows: 'events',
      columns: [
        { header: 'EVENT', field: 'name' },
        { header: 'KIND', value: (e) => (e.pattern ? 'pattern' : 'event') },
        { header: 'MEANS', field: 'description' },
      ],
    },
    {
      name: 'update',
      route: putHooksId,
      description: "change a hook's script (--script file), event, priority, timeout, retries or name",
      omit: ['event_type', 'script'],
      options: [eventOption, scriptOption],
      body: scriptBody,
      text: (hook: Row) => `hook ${String(hook.name)} updated\n`,
    },
    {
      name: 'remove',
      aliases: ['rm', 'delete'],
      route: deleteHooksId,
      text: (_answer: unknown, input) => `hook ${input.args.id} removed\n`,
    },
    { name: 'enable', route: postHooksIdEnable, text: (hook: Row) => `hook ${String(hook.name)} enabled\n` },
    { name: 'disable', route: postHooksIdDisable, text: (hook: Row) => `hook ${String(hook.name)} disabled\n` },
    {
      name: 'history',
      route: getHooksIdHistory,
      rows: 'executions',
      empty: 'no executions yet',
      columns: [
        { header: 'TIME', field: 'executed_at' },
        { header: 'EVENT', field: 'event_id' },
        { header: 'TYPE', field: 'event_type' },
        { header: 'OK', value: (e) => (e.success ? 'yes' : 'no') },
        { header: 'MS', field: 'duration_ms' },
        { header: 'ERROR', value: (e) => e.error ?? '' },
      ],
    },
    {
      name: 'test',
      route: postHooksIdTest,
      description: 'run a hook on a sample payload (or --payload JSON); --dry-run: modules do not act',
      omit: ['payload'],
      options: [payloadOption],
      body: (input) => {
        if (typeof input.options.payload !== 'string') return {};
        try {
          return { payload: JSON.parse(input.options.payload) as unknown };
        } catch (error) {
          throw new InvalidInputError(`--payload: not JSON: ${(error as Error).message}`, { field: 'payload' });
        }
      },
      text: (result: Row) =>
        `${result.success ? 'succeeded' : 'failed'} in ${String(result.duration_ms)} ms on ${String(result.event_type)}` +
        `${result.dry_run ? ' (dry run)' : ''}\n${result.error ? `error: ${String(result.error)}\n` : ''}` +
        `${result.output ? `output:\n${String(result.output)}\n` : ''}`,
      exitCode: (result: Row) => (result.success ? 0 : 1),
    },
  ],
});
