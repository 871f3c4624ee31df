import type { EventBus } from '@runner/plugin-sdk';
import type { AuditLog } from './audit-log.js';

/**
 * What changes who may connect as an agent happens over gRPC or in files, not through a route the
 * audit guard sees: enrolments and join-token rotations reach the audit log as events. So do the
 * start and end of terminal sessions, which outlive the request that opened them, and GitOps
 * syncs, which the interval and the webhook start too.
 */
export function auditAgentEvents(events: EventBus, audit: AuditLog): () => void {
  const base = { user: 'system', ip: '', result: 'success' as const, status: 200, request_id: '' };
  const offs = [
    events.on('agent.enrolled', ({ data }) =>
      audit.record({
        ...base,
        event: 'agent.enrolled',
        ip: data.address,
        resource: `agent/${data.agent_name}`,
        action: 'enrolment with the join token',
        detail: `agent ${data.agent_name} was issued its own credential`,
      }),
    ),
    events.on('agent.join_token_rotated', ({ data }) =>
      audit.record({
        ...base,
        event: 'agent.join_token_rotated',
        resource: 'agent-token',
        action: 'join token replaced',
        detail: `a new join token in ${data.source}; agents enrol with it from now on`,
      }),
    ),
    events.on('terminal.opened', ({ data }) =>
      audit.record({
        ...base,
        user: data.user,
        event: 'terminal.opened',
        resource: `terminal/${data.id}`,
        action: 'terminal session opened',
        detail: `a shell on ${data.target}`,
      }),
    ),
    // A sync may come from the interval or the webhook, with no request of a user to audit.
    events.on('gitops.synced', ({ data }) =>
      audit.record({
        ...base,
        user: data.by,
        event: 'gitops.synced',
        resource: `gitops/${data.commit}`,
        action: 'GitOps sync applied',
        detail: `on master ${data.master}: ${data.flows} flow(s), ${data.hooks} hook(s), ${data.schedules} schedule(s) changed`,
      }),
    ),
    events.on('gitops.sync_failed', ({ data }) =>
      audit.record({
        ...base,
        user: data.by,
        event: 'gitops.sync_failed',
        resource: `gitops/${data.commit ?? 'unknown'}`,
        action: 'GitOps sync failed, nothing changed',
        result: 'failure',
        status: 500,
        detail: `on master ${data.master}: ${data.reason}`,
      }),
    ),
    events.on('terminal.closed', ({ data }) =>
      audit.record({
        ...base,
        user: data.user,
        event: 'terminal.closed',
        resource: `terminal/${data.id}`,
        action: 'terminal session ended',
        detail: `the shell on ${data.target}: ${data.reason}`,
      }),
    ),
  ];
  return () => offs.forEach((off) => off());
}
