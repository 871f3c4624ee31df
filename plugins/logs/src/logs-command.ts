import { connectMaster, InvalidInputError, type CommandContext, type CommandInput } from '@runner/plugin-sdk';
import { LEVELS, type LogEntry } from './log-file.js';

function line(entry: LogEntry): string {
  const fields = Object.entries(entry.fields ?? {})
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${entry.timestamp} ${entry.level.toUpperCase().padEnd(5)} ${entry.message}${fields ? `  ${fields}` : ''}\n`;
}

/**
 * `runner logs [--level] [--since] [--limit] [--follow]`: the master's log through its API (so it
 * works from any host that reaches the master), then with --follow its new lines as they come.
 */
export async function logsCommand({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const level = options.level as string | undefined;
  if (level !== undefined && !(LEVELS as readonly string[]).includes(level))
    throw new InvalidInputError(`--level must be one of ${LEVELS.join(', ')}`, { field: 'level' });
  const json = options.output === 'json';
  const print = (entry: LogEntry) => ctx.stdout.write(json ? `${JSON.stringify(entry)}\n` : line(entry));
  const master = await connectMaster(ctx, options.masterUrl);
  const query = new URLSearchParams();
  if (level) query.set('level', level);
  if (options.since) query.set('since', String(options.since));
  if (options.limit) query.set('limit', String(options.limit));
  const { entries } = await master.call<{ entries: LogEntry[] }>('GET', `/logs?${query}`);
  entries.forEach(print);
  if (!options.follow) return 0;

  const stream = await master.request('GET', `/logs/stream${level ? `?level=${level}` : ''}`, {
    timeoutMs: 0,
    headers: { accept: 'text/event-stream' },
  });
  const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return 0;
    buffer += value;
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      if (data) print(JSON.parse(data) as LogEntry);
    }
  }
}
