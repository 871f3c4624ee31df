import { setTimeout as sleep } from 'node:timers/promises';
import { actionCommand, callRoute, resourceCommand, type CommandSpec, type ResourceAction } from '@runner/plugin-sdk';
import { getEvents, getEventsId, postEventsIdRetry } from './api.js';

type Row = Record<string, unknown>;
const when = (row: Row) => new Date(Number(row.timestamp)).toISOString();
const line = (row: Row) =>
  `${when(row)}  ${String(row.status).padEnd(10)} ${String(row.event_type).padEnd(20)} ${String(row.id)}${
    row.last_error ? `  ${String(row.last_error)}` : ''
  }\n`;

const columns = [
  { header: 'ID', field: 'id' },
  { header: 'TYPE', field: 'event_type' },
  { header: 'STATUS', field: 'status' },
  { header: 'TIME', value: when },
  { header: 'ATTEMPTS', field: 'attempts' },
  { header: 'ERROR', value: (row: Row) => row.last_error ?? '' },
];

/** The event, its payload and each hook's result. */
function showEvent(event: Row & { hooks: Row[] }): string {
  let text = `id:        ${String(event.id)}\ntype:      ${String(event.event_type)}\nstatus:    ${String(event.status)}\n`;
  text += `time:      ${when(event)}\nattempts:  ${String(event.attempts)}\n`;
  if (event.last_error) text += `error:     ${String(event.last_error)}\n`;
  text += `payload:   ${JSON.stringify(event.data)}\n`;
  text += event.hooks.length === 0 ? 'hooks:     none ran\n' : 'hooks:\n';
  for (const hook of event.hooks)
    text += `  ${String(hook.hook_name)} (#${String(hook.hook_id)}): ${String(hook.status)} after ${String(
      hook.attempts,
    )} attempt(s), ${String(hook.duration_ms ?? '-')} ms${hook.error ? `: ${String(hook.error)}` : ''}\n`;
  return text;
}

/**
 * `runner events watch`: events as they are stored and as their status changes, one line each,
 * polled every second (the list's newest page) until Ctrl-C.
 */
const watchAction: ResourceAction = {
  name: 'watch',
  route: getEvents,
  description: 'print events as they come and as their status changes, until Ctrl-C',
  omit: ['limit', 'offset', 'until'],
  line,
  rows: 'events',
  follow: {
    description: 'keep printing (always on for watch)',
    newestFirst: true,
    rows: async function* ({ master, input, answer, signal }) {
      const shown = new Map<string, unknown>();
      for (const row of (answer as { events: Row[] }).events) shown.set(String(row.id), row.status);
      const since = String(Date.now() - 60_000);
      while (!signal.aborted) {
        await sleep(1000, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
        const query = {
          type: input.options.type as string | undefined,
          status: input.options.status as string | undefined,
          since,
          limit: 1000,
        };
        const page = await callRoute(master, getEvents, { query, signal });
        for (const row of [...page.events].reverse() as Row[]) {
          if (shown.get(String(row.id)) === row.status) continue;
          shown.set(String(row.id), row.status);
          if (shown.size > 10_000) shown.delete(shown.keys().next().value as string);
          yield row;
        }
      }
    },
  },
};

/** `runner events list|get|retry|watch`: each subcommand one of the plugin's routes (api.ts). */
export const eventsCommand: CommandSpec = resourceCommand({
  name: 'events',
  aliases: ['event'],
  description: 'the durable event queue hooks run on: list, get, retry, watch',
  actions: [
    {
      name: 'list',
      aliases: ['ls'],
      route: getEvents,
      description: 'stored events, newest first (--type task.*, --status failed, --since 1h)',
      rows: 'events',
      columns,
      empty: 'no events match',
      watch: true,
    },
    {
      name: 'get',
      aliases: ['show'],
      route: getEventsId,
      description: "an event's payload and each hook's result on it",
      text: (event: Row & { hooks: Row[] }) => showEvent(event),
    },
    {
      name: 'retry',
      route: postEventsIdRetry,
      description: 'run the hooks that failed on a failed event again',
      text: (event: Row) => `event ${String(event.id)} is ${String(event.status)} again: its failed hooks run again\n`,
    },
  ],
  subcommands: [alwaysFollowing(watchAction)],
});

/** The action as a command that follows without `--follow`. */
function alwaysFollowing(action: ResourceAction): CommandSpec {
  const command = actionCommand(action);
  const run = command.run!;
  return {
    ...command,
    options: command.options?.filter((option) => !option.flags.includes('--follow')),
    run: (input, ctx) => run({ ...input, options: { ...input.options, follow: true } }, ctx),
  };
}
