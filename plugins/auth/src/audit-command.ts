import { setTimeout as sleep } from 'node:timers/promises';
import { callRoute, resourceAction, type ResourceAction } from '@runner/plugin-sdk';
import { getAudit } from './api.js';
import { auditText, type AuditRecord } from './audit-log.js';

// Escaped again here: records written before fields were escaped at recording may hold raw ones.
const line = (row: Record<string, unknown>) => {
  const r = row as unknown as AuditRecord;
  const [event, user, ip, action, resource, detail] = [r.event, r.user, r.ip, r.action, r.resource, r.detail ?? ''].map(
    auditText,
  );
  return `${r.timestamp}  ${event.padEnd(16)} ${user.padEnd(12)} ${ip.padEnd(15)} ${r.result.padEnd(7)} ${r.status} ${action} ${resource}${detail ? `  ${detail}` : ''}\n`;
};

/** `runner audit list [--user u] [--event e] [--since 1h] [--follow]`. */
export const auditAction: ResourceAction = resourceAction(getAudit, {
  name: 'list',
  aliases: ['ls'],
  description: 'list audit records, newest first; --follow prints new ones as they come',
  rows: 'records',
  line,
  empty: 'no audit record matches',
  // Paging is by --limit and --offset; after_id is how --follow asks for what is newer.
  omit: ['after_id'],
  text: (page, input) => {
    if (page.records.length === 0) return 'no audit record matches\n';
    const more =
      page.records.length < page.total ? `(${page.records.length} of ${page.total}; --offset for more)\n` : '';
    return page.records.map(line).join('') + (input.options.follow === true ? '' : more);
  },
  follow: {
    description: 'keep printing new records (every 2 s) until Ctrl-C',
    newestFirst: true,
    rows: async function* ({ master, input, answer, signal }) {
      let last = Number((answer.records[0] as { id?: number } | undefined)?.id ?? 0);
      const filters: Record<string, string | undefined> = {};
      for (const key of ['user', 'event', 'result'] as const)
        if (typeof input.options[key] === 'string') filters[key] = input.options[key] as string;
      while (!signal.aborted) {
        await sleep(2000, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
        const query = { ...filters, after_id: String(last), limit: '1000' };
        const newer = await callRoute(master, getAudit, { query, signal });
        // The schema leaves a record's fields open (the audit plugin's AuditRecord).
        for (const record of newer.records as Record<string, unknown>[]) {
          last = Number(record.id);
          yield record;
        }
      }
    },
  },
});
