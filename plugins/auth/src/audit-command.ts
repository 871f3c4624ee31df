import { setTimeout as sleep } from 'node:timers/promises';
import { connectMaster, MASTER_URL_OPTION, type CommandSpec } from '@runner/plugin-sdk';
import { auditText, type AuditRecord } from './audit-log.js';

interface Page {
  records: AuditRecord[];
  total: number;
}

// Escaped again here: records written before fields were escaped at recording may hold raw ones.
const line = (r: AuditRecord) => {
  const [event, user, ip, action, resource, detail] = [r.event, r.user, r.ip, r.action, r.resource, r.detail ?? ''].map(
    auditText,
  );
  return `${r.timestamp}  ${event.padEnd(16)} ${user.padEnd(12)} ${ip.padEnd(15)} ${r.result.padEnd(7)} ${r.status} ${action} ${resource}${detail ? `  ${detail}` : ''}\n`;
};

/** `runner audit list [--user u] [--event e] [--since 1h] [--follow]`. */
export const auditListCommand: CommandSpec = {
  name: 'list',
  description: 'list audit records, newest first; --follow prints new ones as they come',
  options: [
    MASTER_URL_OPTION,
    { flags: '--user <name>', description: 'only this user or token' },
    {
      flags: '--event <event>',
      description: 'only this event (auth.login, auth.login_failed, api.call, access.denied, user.add...)',
    },
    { flags: '--result <result>', description: 'success or failure', choices: ['success', 'failure'] },
    { flags: '--since <when>', description: 'ISO 8601 time or a duration back from now (1h, 7d)' },
    { flags: '--limit <n>', description: 'records per page (default 50, at most 1000)', default: '50' },
    { flags: '--offset <n>', description: 'records to skip', default: '0' },
    { flags: '--follow', description: 'keep printing new records (every 2 s) until Ctrl-C' },
    {
      flags: '--output <format>',
      description: 'text or json (one object per line with --follow)',
      choices: ['text', 'json'],
      default: 'text',
    },
  ],
  run: async ({ options }, ctx) => {
    const master = await connectMaster(ctx, options.masterUrl);
    const filters = new URLSearchParams();
    for (const key of ['user', 'event', 'result', 'since'] as const) {
      if (typeof options[key] === 'string') filters.set(key, options[key] as string);
    }
    const asJson = options.output === 'json';
    const first = new URLSearchParams(filters);
    first.set('limit', String(options.limit));
    first.set('offset', String(options.offset));
    const page = await master.call<Page>('GET', `/audit?${first}`);
    if (!options.follow) {
      if (asJson) ctx.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
      else if (page.records.length === 0) ctx.stdout.write('no audit record matches\n');
      else {
        for (const record of page.records) ctx.stdout.write(line(record));
        if (page.records.length < page.total)
          ctx.stdout.write(`(${page.records.length} of ${page.total}; --offset for more)\n`);
      }
      return 0;
    }
    // Following: the page oldest first, then whatever is newer, polled.
    const print = (r: AuditRecord) => ctx.stdout.write(asJson ? `${JSON.stringify(r)}\n` : line(r));
    for (const record of [...page.records].reverse()) print(record);
    let last = page.records[0]?.id ?? 0;
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    try {
      while (!stop.signal.aborted) {
        await sleep(2000, undefined, { signal: stop.signal }).catch(() => undefined);
        if (stop.signal.aborted) break;
        const next = new URLSearchParams(filters);
        next.delete('since');
        next.set('after_id', String(last));
        next.set('limit', '1000');
        const newer = await master
          .call<Page>('GET', `/audit?${next}`, { signal: stop.signal })
          .catch((error: Error) => {
            if (stop.signal.aborted) return { records: [], total: 0 };
            throw error;
          });
        for (const record of newer.records) {
          print(record);
          last = record.id;
        }
      }
    } finally {
      process.off('SIGINT', onSignal);
    }
    return 0;
  },
};
