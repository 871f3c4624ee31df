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
    async kept() {
      const row = await store.get<{ n: number; oldest: string | null }>(
        'SELECT COUNT(*) AS n, MIN(timestamp) AS oldest FROM audit_log',
      );
      return { count: row?.n ?? 0, oldest: row?.oldest ?? undefined };
    },
    async due(now) {
      const { cutoff, beyondId } = await auditBounds(store, settings, now);
      const byCount = beyondId === undefined ? '' : ' OR id <= ?';
      const params = beyondId === undefined ? [cutoff] : [cutoff, beyondId];
      const row = await store.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM audit_log WHERE timestamp < ?${byCount}`,
        params,
      );
      return row?.n ?? 0;
    },
    async pruneBatch(now) {
      const ids = new Set<number>();
      const { cutoff, beyondId } = await auditBounds(store, settings, now);
      // Each query walks an index from its oldest end and stops after one batch.
      for (const { id } of await store.all<{ id: number }>(
        'SELECT id FROM audit_log WHERE timestamp < ? ORDER BY timestamp LIMIT ?',
        [cutoff, AUDIT_RETENTION_BATCH],
      ))
        ids.add(id);
      if (beyondId !== undefined)
        for (const { id } of await store.all<{ id: number }>(
          'SELECT id FROM audit_log WHERE id <= ? ORDER BY id LIMIT ?',
          [beyondId, AUDIT_RETENTION_BATCH],
        ))
          ids.add(id);
      const batch = [...ids].slice(0, AUDIT_RETENTION_BATCH);
      if (batch.length === 0) return 0;
      await store.run(`DELETE FROM audit_log WHERE id IN (${batch.map(() => '?').join(', ')})`, batch);
      return batch.length;
    },
  };
}

/**
 * What the audit rule keeps at `now`: records from `cutoff` on, and (with a count limit) those
 * after `beyondId`, the newest record past the limit. Pruning and counting what is due share it.
 */
async function auditBounds(
  store: Store,
  settings: AuditRetentionSettings,
  now: Date,
): Promise<{ cutoff: string; beyondId: number | undefined }> {
  const cutoff = new Date(now.getTime() - settings.maxAgeMs).toISOString();
  const beyond =
    settings.maxRecords > 0
      ? await store.get<{ id: number }>('SELECT id FROM audit_log ORDER BY id DESC LIMIT 1 OFFSET ?', [
          settings.maxRecords,
        ])
      : undefined;
  return { cutoff, beyondId: beyond?.id };
}

/**
 * Revoked sessions (logouts) are kept only until the session would have expired anyway: after
 * that the token is refused for its expiry, so its revocation record is dead weight. Counted from
 * the table (which `accounts` mirrors once open), so a report needs no opened accounts.
 */
export function revokedSessionRetention(store: Store, accounts: Accounts): RetentionPolicy {
  return {
    name: 'revoked sessions',
    rule: 'until the session would have expired (auth.jwt.expiry)',
    async kept() {
      const row = await store.get<{ n: number; first: number | null }>(
        'SELECT COUNT(*) AS n, MIN(expires_at) AS first FROM auth_revoked',
      );
      return {
        count: row?.n ?? 0,
        ...(row?.first == null ? {} : { oldest: new Date(row.first * 1000).toISOString() }),
      };
    },
    due: async (now) =>
      (
        await store.get<{ n: number }>('SELECT COUNT(*) AS n FROM auth_revoked WHERE expires_at <= ?', [
          Math.floor(now.getTime() / 1000),
        ])
      )?.n ?? 0,
    pruneBatch: (now) => accounts.forgetExpiredRevocations(Math.floor(now.getTime() / 1000), AUDIT_RETENTION_BATCH),
  };
}

/**
 * The auth plugin's policies over `store`: what the service registers, and what `runner db stats`
 * reports without a master (with accounts that were never opened: reports do not prune).
 */
export function authRetentionPolicies(
  store: Store,
  settings: AuditRetentionSettings,
  accounts: Accounts,
): RetentionPolicy[] {
  return [auditRetention(store, settings), revokedSessionRetention(store, accounts)];
}
