import type { Logger, Migration, SqlValue, Store } from '@runner/plugin-sdk';

/** One audit record (service.md section 2: timestamp, event, user, ip, resource, action, result). */
export interface AuditRecord {
  id: number;
  /** ISO 8601. */
  timestamp: string;
  /** `auth.login`, `auth.login_failed`, `auth.logout`, `api.call`, `access.denied`, `user.add`... */
  event: string;
  /** User or token name; `anonymous` before authentication. */
  user: string;
  ip: string;
  /** The request path, without its query (which may carry values not meant for a log). */
  resource: string;
  /** `POST /api/v1/workflows/run`, or the admin action. */
  action: string;
  /** `success` or `failure`. */
  result: 'success' | 'failure';
  /** HTTP status of the answer. */
  status: number;
  request_id: string;
  /** What the action was about, when the route says (`workflow deploy, run r-...`, the command of an exec). */
  detail: string;
}

export type AuditEntry = Omit<AuditRecord, 'id' | 'timestamp' | 'detail'> & { timestamp?: string; detail?: string };

export interface AuditQuery {
  user?: string;
  event?: string;
  result?: string;
  /** ISO 8601 bounds. */
  since?: string;
  until?: string;
  /** Records with a larger id only (for following). */
  after_id?: number;
  limit: number;
  offset: number;
}

export const AUDIT_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'audit records',
    sql: `CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        timestamp TEXT NOT NULL,
        event TEXT NOT NULL,
        "user" TEXT NOT NULL,
        ip TEXT NOT NULL,
        resource TEXT NOT NULL,
        action TEXT NOT NULL,
        result TEXT NOT NULL,
        status INTEGER NOT NULL,
        request_id TEXT NOT NULL
      );
      CREATE INDEX audit_log_timestamp ON audit_log (timestamp);
      CREATE INDEX audit_log_user ON audit_log ("user", id);`,
  },
  {
    id: 2,
    description: 'what an audited action was about (the workflow and run, the command)',
    sql: `ALTER TABLE audit_log ADD COLUMN detail TEXT NOT NULL DEFAULT ''`,
  },
];

const INSERT = `INSERT INTO audit_log (timestamp, event, "user", ip, resource, action, result, status, request_id, detail)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Longest text kept in one field: a record says what happened, it does not keep what was sent. */
const MAX_FIELD = 512;

/**
 * A field as the log keeps it: control characters (newlines, escape sequences a terminal obeys) and
 * bidirectional overrides (text that reads backwards in the UI) written as `\u001b`-style escapes,
 * and cut at MAX_FIELD characters. Fields come from requests (paths, user names typed at login,
 * commands), so `runner audit list` and the UI show them as text, never as effects.
 */
export function auditText(value: string): string {
  const escaped = value.replace(
    // Matching control characters is the point here.
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return escaped.length > MAX_FIELD ? `${escaped.slice(0, MAX_FIELD - 3)}...` : escaped;
}

/**
 * The audit log in the store. Records are written in batches (one transaction per tick), so a
 * burst of API calls costs one fsync; `flush` waits for what was recorded so far.
 */
export class AuditLog {
  private pending: AuditEntry[] = [];
  private scheduled?: NodeJS.Immediate;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  /** Creates the table; retention (audit-retention.ts) is the store's to run. */
  async open(): Promise<void> {
    await this.store.migrate('audit', AUDIT_MIGRATIONS);
  }

  record(entry: AuditEntry): void {
    this.pending.push({
      timestamp: entry.timestamp ?? new Date().toISOString(),
      event: auditText(entry.event),
      user: auditText(entry.user),
      ip: auditText(entry.ip),
      resource: auditText(entry.resource),
      action: auditText(entry.action),
      result: entry.result,
      status: entry.status,
      request_id: auditText(entry.request_id),
      detail: auditText(entry.detail ?? ''),
    });
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      void this.flush();
    });
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    await this.flush();
  }

  async list(query: AuditQuery): Promise<{ records: AuditRecord[]; total: number }> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    const add = (sql: string, value: SqlValue | undefined) => {
      if (value === undefined) return;
      where.push(sql);
      params.push(value);
    };
    add('"user" = ?', query.user);
    add('event = ?', query.event);
    add('result = ?', query.result);
    add('timestamp >= ?', query.since);
    add('timestamp <= ?', query.until);
    add('id > ?', query.after_id);
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total =
      (await this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM audit_log ${clause}`, params))?.n ?? 0;
    // Following (after_id) reads forwards; a listing shows the newest first.
    const order = query.after_id === undefined ? 'DESC' : 'ASC';
    const records = await this.store.all<AuditRecord>(
      `SELECT * FROM audit_log ${clause} ORDER BY id ${order} LIMIT ? OFFSET ?`,
      [...params, query.limit, query.offset],
    );
    return { records, total };
  }

  private async write(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    try {
      await this.store.transaction(
        batch.map((e) => ({
          sql: INSERT,
          params: [
            e.timestamp!,
            e.event,
            e.user,
            e.ip,
            e.resource,
            e.action,
            e.result,
            e.status,
            e.request_id,
            e.detail ?? '',
          ],
        })),
      );
    } catch (error) {
      // The store refuses writes while it stops; losing audit silently would hide that.
      this.logger.error(`could not write ${batch.length} audit record(s): ${(error as Error).message}`);
    }
  }
}
