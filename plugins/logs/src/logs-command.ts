import {
  actionCommand,
  readEventStream,
  resourceAction,
  type CommandSpec,
  type MasterClient,
} from '@runner/plugin-sdk';
import { getLogs } from './api.js';
import type { LogEntry } from './log-file.js';

function line(row: Record<string, unknown>): string {
  const entry = row as unknown as LogEntry;
  const fields = Object.entries(entry.fields ?? {})
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${entry.timestamp} ${entry.level.toUpperCase().padEnd(5)} ${entry.message}${fields ? `  ${fields}` : ''}\n`;
}

/** The entries of `GET /logs/stream` (server-sent events) as they come. */
async function* streamed(master: MasterClient, level: unknown, signal: AbortSignal): AsyncIterable<LogEntry> {
  const stream = await master.request('GET', `/logs/stream${typeof level === 'string' ? `?level=${level}` : ''}`, {
    timeoutMs: 0,
    signal,
    headers: { accept: 'text/event-stream' },
  });
  for await (const { data } of readEventStream(stream)) yield data as LogEntry;
}

/**
 * `runner logs [--level] [--since] [--limit] [--follow]`: the master's log through its API (so it
 * works from any host that reaches the master), then with --follow its new lines as they come.
 */
export const logsCommand: CommandSpec = actionCommand(
  resourceAction(getLogs, {
    name: 'logs',
    description: "Show the master's log (through its API); --follow keeps printing new lines",
    rows: 'entries',
    line,
    empty: 'no log lines match',
    follow: {
      description: 'keep printing lines as the master writes them (Ctrl-C stops)',
      rows: ({ master, input, signal }) =>
        streamed(master, input.options.level, signal) as AsyncIterable<Record<string, unknown>>,
    },
  }),
);
