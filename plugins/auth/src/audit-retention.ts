import { formatDuration, type RetentionPolicy, type Store } from '@runner/plugin-sdk';
import type { Accounts } from './accounts.js';

/** Records removed per batch: a few milliseconds of sql.js work, then the event loop runs again. */
export const AUDIT_RETENTION_BATCH = 500;

export interface AuditRetentionSettings {
  /** Records older than this go (`audit.retention`). */
  maxAgeMs: number;
  /** At most this many records are kept, the newest (`audit.retention_max_records`); 0: no limit. */
  maxRecords: number;
}

/**
 * The audit log bounded by age and by count, pruned by the store's retention runner in the
 * background. The count limit matters as much as the age: every refused request is recorded, so a
 * client hammering the API with bad credentials would otherwise grow the table (and the master's
 * memory, sql.js holds it all) without bound for the whole retention period. The oldest go first.
 */
export function auditRetention(store: Store, settings: AuditRetentionSettings): RetentionPolicy {
  const limits = [
    `${formatDuration(settings.maxAgeMs)} old at most`,
    settings.maxRecords > 0 ? `the newest ${settings.maxRecords}` : '',
  ];
  return {
    name: 'audit records',
    rule: `${limits.filter(Boolean).join(', ')} (audit.retention, audit.retention_max_records)`,
    kept() {
      const row = store.get<{ n: number; oldest: string | null }>(
        'SELECT COUNT(*) AS n, MIN(timestamp) AS oldest FROM audit_log',
      );
      return { count: row?.n ?? 0, oldest: row?.oldest ?? undefined };
    },
    async pruneBatch(now) {
      const ids = new Set<number>();
      // Each query walks an index from its oldest end and stops after one batch.
      const cutoff = new Date(now.getTime() - settings.maxAgeMs).toISOString();
      for (const { id } of store.all<{ id: number }>(
        'SELECT id FROM audit_log WHERE timestamp < ? ORDER BY timestamp LIMIT ?',
        [cutoff, AUDIT_RETENTION_BATCH],
      ))
        ids.add(id);
      if (settings.maxRecords > 0) {
        const beyond = store.get<{ id: number }>('SELECT id FROM audit_log ORDER BY id DESC LIMIT 1 OFFSET ?', [
          settings.maxRecords,
        ]);
        if (beyond)
          for (const { id } of store.all<{ id: number }>('SELECT id FROM audit_log WHERE id <= ? ORDER BY id LIMIT ?', [
            beyond.id,
            AUDIT_RETENTION_BATCH,
          ]))
            ids.add(id);
      }
      const batch = [...ids].slice(0, AUDIT_RETENTION_BATCH);
      if (batch.length === 0) return 0;
      await store.run(`DELETE FROM audit_log WHERE id IN (${batch.map(() => '?').join(', ')})`, batch);
      return batch.length;
    },
  };
}

/**
 * Revoked sessions (logouts) are kept only until the session would have expired anyway: after
 * that the token is refused for its expiry, so its revocation record is dead weight.
 */
export function revokedSessionRetention(accounts: Accounts): RetentionPolicy {
  return {
    name: 'revoked sessions',
    rule: 'until the session would have expired (auth.jwt.expiry)',
    kept: () => accounts.revocations(),
    pruneBatch: (now) => accounts.forgetExpiredRevocations(Math.floor(now.getTime() / 1000), AUDIT_RETENTION_BATCH),
  };
}
