// The events that reach the audit log without a request (here GitOps syncs, which the interval and
// the webhook start too), over the real event hub.
import { EventHub } from '@runner/plugin-sdk';
import { describe, expect, it } from 'vitest';
import type { AuditEntry, AuditLog } from './audit-log.js';
import { auditAgentEvents } from './audit-events.js';
import { silentLogger } from './test-support.js';

describe('audited events', () => {
  it('records a GitOps sync that failed, with its reason, and one that applied', () => {
    const hub = new EventHub({ logger: silentLogger });
    const recorded: AuditEntry[] = [];
    const audit = { record: (entry: AuditEntry) => void recorded.push(entry) } as unknown as AuditLog;
    const off = auditAgentEvents(hub.forPlugin('auth'), audit);
    const bus = hub.forPlugin('gitops');
    const sync = { commit: 'c0ffee', by: 'interval', master: 'master-a' };
    bus.emit('gitops.sync_failed', { ...sync, reason: 'the database refuses job nightly' });
    bus.emit('gitops.synced', { ...sync, previous_commit: null, flows: 2, hooks: 1, schedules: 0 });
    off();
    bus.emit('gitops.synced', { ...sync, previous_commit: null, flows: 0, hooks: 0, schedules: 0 });
    expect(recorded).toEqual([
      expect.objectContaining({
        event: 'gitops.sync_failed',
        user: 'interval',
        resource: 'gitops/c0ffee',
        result: 'failure',
        detail: 'on master master-a: the database refuses job nightly',
      }),
      expect.objectContaining({
        event: 'gitops.synced',
        result: 'success',
        detail: 'on master master-a: 2 flow(s), 1 hook(s), 0 schedule(s) changed',
      }),
    ]);
  });
});
