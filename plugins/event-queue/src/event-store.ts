import {
  ConflictError,
  NotFoundError,
  type EventStatus,
  type HandlerOutcome,
  type Migration,
  type QueuedEvent,
  type SqlValue,
  type Store,
  type StoreTransaction,
} from '@runner/plugin-sdk';
import type { Depth } from './depth.js';

export const EVENT_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'the durable event queue and each hook result per event',
    sql: `CREATE TABLE events (
      id TEXT PRIMARY KEY,
      event_type TEXT NOT NULL,
      status TEXT NOT NULL,
      emitted_at INTEGER NOT NULL,
      data TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT,
      depth INTEGER NOT NULL DEFAULT 0,
      lease_owner TEXT,
      lease_until INTEGER,
      updated_at INTEGER NOT NULL
    );
    CREATE INDEX events_by_status ON events (status, id);
    CREATE INDEX events_by_type ON events (event_type, id);
    CREATE INDEX events_by_time ON events (emitted_at);
    CREATE TABLE event_hook_results (
      event_id TEXT NOT NULL,
      hook_id INTEGER NOT NULL,
      hook_name TEXT NOT NULL,
      status TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      owner TEXT NOT NULL,
      started_at INTEGER NOT NULL,
      duration_ms INTEGER,
      output TEXT,
      error TEXT,
      PRIMARY KEY (event_id, hook_id)
    );`,
  },
];

/** What one hook came to on one event; `running` while it runs (or when its worker died in it). */
export interface HookResult {
  hook_id: number;
  hook_name: string;
  status: 'running' | 'succeeded' | 'failed';
  attempts: number;
  /** ISO 8601. */
  started_at: string;
  duration_ms: number | null;
  output: string | null;
  error: string | null;
}

export interface EventFilter {
  /** An event name, or a pattern ending in `.*` (`task.*`). */
  type?: string;
  status?: EventStatus;
  /** Milliseconds: emitted at or after. */
  since?: number;
  /** Milliseconds: emitted before. */
  until?: number;
  limit: number;
  offset: number;
}

interface EventRow {
  id: string;
  event_type: string;
  status: EventStatus;
  emitted_at: number;
  data: string;
  attempts: number;
  last_error: string | null;
  depth: number;
}

interface HookResultRow extends Omit<HookResult, 'started_at'> {
  started_at: number;
  owner: string;
}

/** A hook's run on an event, as its claim writes it. */
export interface HookClaim {
  eventId: string;
  hook: { id: number; name: string };
  owner: string;
  /** Milliseconds: the run's start as the result keeps it. */
  now: number;
}

export type ClaimAnswer = { claimed: true } | { claimed: false; existing: HookResult };

/** An event a worker ends. */
export interface EventFinish {
  id: string;
  owner: string;
  status: 'completed' | 'failed';
  lastError: string | null;
  now: number;
}

/** Thrown inside a batch's transaction to roll it back when a row of it is not as the batch assumed. */
class BatchDiffers extends Error {}

const COLUMNS = 'id, event_type, status, emitted_at, data, attempts, last_error, depth';
/** Rows per multi-row INSERT: within both backends' limits on parameters (7 a row). */
const INSERT_CHUNK = 500;

function toEvent(row: EventRow): QueuedEvent {
  return {
    id: row.id,
    event_type: row.event_type,
    status: row.status,
    timestamp: row.emitted_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
    attempts: row.attempts,
    last_error: row.last_error,
    depth: row.depth,
  };
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** Escapes `%`, `_` and `\` for a LIKE pattern written with `ESCAPE '\'`. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The events and hook results tables. Every claim (events taken by a worker, a hook's run on an
 * event) is made in the database, so several masters and a restarted one agree on who does what.
 */
export class EventStore {
  constructor(
    private readonly store: Store,
    /** Told how each write changed the counts of pending and processing events (QueueDepth). */
    private readonly changed: (delta: Partial<Depth>) => void = () => {},
  ) {}

  async open(): Promise<void> {
    await this.store.migrate('event-queue', EVENT_MIGRATIONS);
  }

  /**
   * Stores new events in as few statements as fit: `pending` when a hook may want them,
   * `completed` when none does (`idle`), so that most events cost one write and no claim.
   */
  async insert(
    events: readonly { id: string; type: string; timestamp: number; data: unknown }[],
    idle: (event: { id: string }) => boolean = () => false,
  ): Promise<void> {
    const statements = [];
    let pending = 0;
    for (let at = 0; at < events.length; at += INSERT_CHUNK) {
      const chunk = events.slice(at, at + INSERT_CHUNK);
      const params: SqlValue[] = [];
      for (const e of chunk) {
        const waits = !idle(e);
        if (waits) pending += 1;
        params.push(
          e.id,
          e.type,
          waits ? 'pending' : 'completed',
          e.timestamp,
          JSON.stringify(e.data ?? {}),
          0,
          e.timestamp,
        );
      }
      statements.push({
        sql: `INSERT INTO events (id, event_type, status, emitted_at, data, depth, updated_at) VALUES ${chunk
          .map(() => '(?, ?, ?, ?, ?, ?, ?)')
          .join(', ')} ON CONFLICT (id) DO NOTHING`,
        params,
      });
    }
    if (statements.length === 0) return;
    const results =
      statements.length === 1
        ? [await this.store.run(statements[0].sql, statements[0].params)]
        : await this.store.transaction(statements);
    // An id stored already is skipped (ON CONFLICT): fresh bus ids never are, so this is exact.
    const inserted = results.reduce((n, r) => n + r.changes, 0);
    this.changed({ pending: Math.min(pending, inserted) });
  }

  /**
   * Takes up to `limit` events for `owner` until `leaseUntil`: pending ones, and processing ones
   * whose lease expired (their worker died). `decide` sees each taken event and says whether it
   * has work (a matching hook); those without are completed in the same transaction.
   */
  claim(
    owner: string,
    now: number,
    leaseUntil: number,
    limit: number,
    hasWork: (event: QueuedEvent) => boolean,
  ): Promise<QueuedEvent[]> {
    const lock = this.store.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const delta = { pending: 0, processing: 0 };
    const claimed = this.store.withTransaction(async (tx) => {
      // Two reads, each on the (status, id) index: an OR of both would scan the table.
      const rows = await tx.all<EventRow>(
        `SELECT ${COLUMNS} FROM events WHERE status = 'pending' ORDER BY id LIMIT ?${lock}`,
        [limit],
      );
      if (rows.length < limit)
        rows.push(
          ...(await tx.all<EventRow>(
            `SELECT ${COLUMNS} FROM events WHERE status = 'processing' AND lease_until < ? ORDER BY id LIMIT ?${lock}`,
            [now, limit - rows.length],
          )),
        );
      if (rows.length === 0) return [];
      const events = rows.map(toEvent);
      const work = events.filter(hasWork);
      const idle = events.filter((e) => !hasWork(e));
      await this.setMany(
        tx,
        work,
        "UPDATE events SET status = 'processing', lease_owner = ?, lease_until = ?, attempts = attempts + 1, updated_at = ?",
        [owner, leaseUntil, now],
      );
      await this.setMany(
        tx,
        idle,
        "UPDATE events SET status = 'completed', lease_owner = NULL, lease_until = NULL, attempts = attempts + 1, updated_at = ?",
        [now],
      );
      // Each taken event leaves its status (pending, or processing past its lease) for its new one.
      for (const e of events) delta[e.status as keyof Depth] -= 1;
      delta.processing += work.length;
      for (const e of work) Object.assign(e, { status: 'processing', attempts: e.attempts + 1 });
      for (const e of idle) Object.assign(e, { status: 'completed', attempts: e.attempts + 1 });
      return events;
    });
    return claimed.then((events) => {
      this.changed(delta);
      return events;
    });
  }

  private async setMany(tx: StoreTransaction, events: QueuedEvent[], update: string, params: SqlValue[]) {
    if (events.length === 0) return;
    await tx.run(`${update} WHERE id IN (${placeholders(events.length)})`, [...params, ...events.map((e) => e.id)]);
  }

  /** Sets the loop-guard depth the worker found for an event (from the run that emitted it). */
  async setDepth(id: string, depth: number): Promise<void> {
    await this.store.run('UPDATE events SET depth = ? WHERE id = ?', [depth, id]);
  }

  /** Makes the leases of every event `owner` holds last until `leaseUntil`. */
  async renew(owner: string, leaseUntil: number): Promise<void> {
    await this.store.run("UPDATE events SET lease_until = ? WHERE lease_owner = ? AND status = 'processing'", [
      leaseUntil,
      owner,
    ]);
  }

  /**
   * With one master on the store (embedded): events a dead process left `processing` go back to
   * `pending` at start, without waiting for their lease (no one else can hold them).
   */
  async releaseAll(now: number): Promise<number> {
    const { changes } = await this.store.run(
      "UPDATE events SET status = 'pending', lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE status = 'processing'",
      [now],
    );
    this.changed({ pending: changes, processing: -changes });
    return changes;
  }

  /**
   * Claims hooks' runs on events, one per claim, answering for each whether this worker is to run
   * it. The common case (no result exists yet) is one multi-row insert; when a result exists for
   * one of them (a reclaimed event), that insert is rolled back and each is claimed on its own, so
   * the answers say which row this worker wrote.
   */
  async claimHooks(claims: readonly HookClaim[]): Promise<ClaimAnswer[]> {
    const allNew = await this.allOrNothing(async (tx) => {
      const params: SqlValue[] = [];
      for (const c of claims) params.push(c.eventId, c.hook.id, c.hook.name, c.owner, c.now);
      const { changes } = await tx.run(
        `INSERT INTO event_hook_results (event_id, hook_id, hook_name, status, owner, started_at)
           VALUES ${claims.map(() => "(?, ?, ?, 'running', ?, ?)").join(', ')} ON CONFLICT (event_id, hook_id) DO NOTHING`,
        params,
      );
      return changes === claims.length;
    });
    if (allNew) return claims.map(() => ({ claimed: true }));
    const answers: ClaimAnswer[] = [];
    for (const c of claims) answers.push(await this.claimHook(c));
    return answers;
  }

  /**
   * Claims one hook's run on an event: true when this worker is to run it. False when a result
   * exists: the hook ran (or was running when its worker died: then it is marked failed, never
   * run again for this event) and `existing` says how it ended.
   */
  private async claimHook({ eventId, hook, owner, now }: HookClaim): Promise<ClaimAnswer> {
    const { changes } = await this.store.run(
      `INSERT INTO event_hook_results (event_id, hook_id, hook_name, status, owner, started_at)
       VALUES (?, ?, ?, 'running', ?, ?) ON CONFLICT (event_id, hook_id) DO NOTHING`,
      [eventId, hook.id, hook.name, owner, now],
    );
    if (changes === 1) return { claimed: true };
    const row = await this.store.get<HookResultRow>(
      'SELECT * FROM event_hook_results WHERE event_id = ? AND hook_id = ?',
      [eventId, hook.id],
    );
    if (!row) return this.claimHook({ eventId, hook, owner, now });
    if (row.status === 'running') {
      // Its worker died while it ran: whether it acted is unknown, so it is not run a second time.
      const error =
        'interrupted: the master running this hook stopped before it ended; retry the event to run it again';
      await this.store.run(
        "UPDATE event_hook_results SET status = 'failed', error = ? WHERE event_id = ? AND hook_id = ? AND status = 'running'",
        [error, eventId, hook.id],
      );
      return { claimed: false, existing: toResult({ ...row, status: 'failed', error }) };
    }
    return { claimed: false, existing: toResult(row) };
  }

  /** Writes how claimed hook runs ended, all in one statement (each row as its claim wrote it, plus the outcome). */
  async finishHooks(finished: readonly { claim: HookClaim; outcome: HandlerOutcome }[]): Promise<void> {
    const params: SqlValue[] = [];
    for (const { claim, outcome } of finished)
      params.push(
        claim.eventId,
        claim.hook.id,
        claim.hook.name,
        outcome.success ? 'succeeded' : 'failed',
        outcome.attempts,
        claim.owner,
        claim.now,
        Math.round(outcome.durationMs),
        outcome.output ?? null,
        outcome.error ?? null,
      );
    // An upsert: the portable multi-row update (the row exists: its claim wrote it).
    await this.store.run(
      `INSERT INTO event_hook_results (event_id, hook_id, hook_name, status, attempts, owner, started_at, duration_ms, output, error)
       VALUES ${finished.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (event_id, hook_id) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
         duration_ms = excluded.duration_ms, output = excluded.output, error = excluded.error`,
      params,
    );
  }

  /**
   * Ends events their workers hold, answering for each whether it did: false when its lease went to
   * another (the worker stalled past it). Events ending alike (status, error) share a statement;
   * when one of them is no longer held, the whole is rolled back and each is ended on its own.
   */
  async finishEvents(finished: readonly EventFinish[]): Promise<boolean[]> {
    const alike = new Map<string, EventFinish[]>();
    for (const f of finished) {
      const key = JSON.stringify([f.owner, f.status, f.lastError, f.now]);
      const group = alike.get(key);
      if (group) group.push(f);
      else alike.set(key, [f]);
    }
    const allHeld = await this.allOrNothing(async (tx) => {
      for (const group of alike.values()) {
        const { owner, status, lastError, now } = group[0];
        const { changes } = await tx.run(
          `UPDATE events SET status = ?, last_error = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
             WHERE id IN (${placeholders(group.length)}) AND lease_owner = ? AND status = 'processing'`,
          [status, lastError, now, ...group.map((f) => f.id), owner],
        );
        if (changes !== group.length) return false;
      }
      return true;
    });
    const answers = allHeld ? finished.map(() => true) : [];
    if (!allHeld) for (const f of finished) answers.push(await this.finishEvent(f));
    this.changed({ processing: -answers.filter(Boolean).length });
    return answers;
  }

  /** Runs `work` in a transaction that is kept only when it answers true (rolled back when false). */
  private allOrNothing(work: (tx: StoreTransaction) => Promise<boolean>): Promise<boolean> {
    return this.store
      .withTransaction(async (tx) => {
        if (!(await work(tx))) throw new BatchDiffers();
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof BatchDiffers) return false;
        throw error;
      });
  }

  private async finishEvent({ id, owner, status, lastError, now }: EventFinish): Promise<boolean> {
    const { changes } = await this.store.run(
      `UPDATE events SET status = ?, last_error = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
       WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
      [status, lastError, now, id, owner],
    );
    return changes === 1;
  }

  /** A failed event back to `pending`: the hooks that failed on it run again, those that succeeded do not. */
  async retry(id: string, now: number): Promise<QueuedEvent> {
    await this.store.withTransaction(async (tx) => {
      const row = await tx.get<{ status: EventStatus }>('SELECT status FROM events WHERE id = ?', [id]);
      if (!row) throw new NotFoundError(`event "${id}" does not exist`, { details: { event: id } });
      if (row.status !== 'failed')
        throw new ConflictError(`event "${id}" is ${row.status}: only a failed event is retried`, {
          details: { event: id, status: row.status },
        });
      await tx.run("DELETE FROM event_hook_results WHERE event_id = ? AND status <> 'succeeded'", [id]);
      await tx.run(
        "UPDATE events SET status = 'pending', last_error = NULL, lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id = ?",
        [now, id],
      );
    });
    this.changed({ pending: 1 });
    return (await this.get(id)) as QueuedEvent;
  }

  async get(id: string): Promise<QueuedEvent | undefined> {
    const row = await this.store.get<EventRow>(`SELECT ${COLUMNS} FROM events WHERE id = ?`, [id]);
    return row && toEvent(row);
  }

  /** Each hook's result on the event, in the order they ran. */
  async results(id: string): Promise<HookResult[]> {
    const rows = await this.store.all<HookResultRow>(
      'SELECT * FROM event_hook_results WHERE event_id = ? ORDER BY started_at, hook_id',
      [id],
    );
    return rows.map(toResult);
  }

  /** Newest first. */
  async list(filter: EventFilter): Promise<{ events: QueuedEvent[]; total: number }> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.type?.endsWith('.*')) {
      where.push("event_type LIKE ? ESCAPE '\\'");
      params.push(`${likeLiteral(filter.type.slice(0, -1))}%`);
    } else if (filter.type) {
      where.push('event_type = ?');
      params.push(filter.type);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.since !== undefined) {
      where.push('emitted_at >= ?');
      params.push(filter.since);
    }
    if (filter.until !== undefined) {
      where.push('emitted_at < ?');
      params.push(filter.until);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [rows, count] = await Promise.all([
      this.store.all<EventRow>(`SELECT ${COLUMNS} FROM events ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`, [
        ...params,
        filter.limit,
        filter.offset,
      ]),
      this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM events ${clause}`, params),
    ]);
    return { events: rows.map(toEvent), total: count?.n ?? 0 };
  }

  /** The dashboard's counts: pending now, and emitted since `since` (indexed, no scan of the rest). */
  async counts(since: number): Promise<{ pending: number; recent: number }> {
    const [pending, recent] = await Promise.all([
      this.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE status = 'pending'"),
      this.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE emitted_at >= ?', [since]),
    ]);
    return { pending: pending?.n ?? 0, recent: recent?.n ?? 0 };
  }

  /** The queue's depth: pending and processing events (indexed by status). */
  async depth(): Promise<{ pending: number; processing: number }> {
    const rows = await this.store.all<{ status: string; n: number }>(
      "SELECT status, COUNT(*) AS n FROM events WHERE status IN ('pending', 'processing') GROUP BY status",
    );
    const of = (status: string) => rows.find((r) => r.status === status)?.n ?? 0;
    return { pending: of('pending'), processing: of('processing') };
  }
}

function toResult(row: HookResultRow): HookResult {
  return {
    hook_id: row.hook_id,
    hook_name: row.hook_name,
    status: row.status,
    attempts: row.attempts,
    started_at: new Date(row.started_at).toISOString(),
    duration_ms: row.duration_ms,
    output: row.output,
    error: row.error,
  };
}
