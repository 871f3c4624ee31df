import {
  checkStackField,
  ConflictError,
  didYouMean,
  InvalidInputError,
  NotFoundError,
  TurnBatch,
  inUnitOfWork,
  type HookDeclaration,
  type Logger,
  type UnitOfWork,
  type HooksService,
  type Migration,
  type SqlValue,
  type Stacks,
  type Store,
  type StoredEventType,
} from '@runner/plugin-sdk';

export const HOOK_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'hooks and their execution history',
    sql: `CREATE TABLE hooks (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE,
      event_type TEXT NOT NULL,
      stack TEXT,
      enabled INTEGER NOT NULL DEFAULT 1,
      priority INTEGER NOT NULL DEFAULT 100,
      timeout_ms INTEGER NOT NULL,
      retries INTEGER NOT NULL DEFAULT 0,
      script TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE hook_executions (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      hook_id INTEGER NOT NULL,
      executed_at INTEGER NOT NULL,
      event_id TEXT NOT NULL,
      event_type TEXT NOT NULL,
      attempt INTEGER NOT NULL,
      success INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      output TEXT,
      error TEXT
    );
    CREATE INDEX hook_executions_by_hook ON hook_executions (hook_id, id);`,
  },
];

/** Executions kept per hook (the newest): `executions` and `success_rate` are counted over them. */
export const HISTORY_PER_HOOK = 500;
/** Bytes of a hook's output or error kept per execution. */
export const OUTPUT_BYTES = 4096;
export const MAX_SCRIPT_BYTES = 256 * 1024;
export const MAX_RETRIES = 10;
export const MAX_TIMEOUT_SECONDS = 3600;
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_PRIORITY = 100;

/** An event a hook may name, or a pattern of them, with what it means (`GET /hook-events`). */
export interface HookEvent {
  name: string;
  pattern: boolean;
  description: string;
}

/**
 * What hooks may name: the events the queue keeps (EventQueue.storedTypes: the events the master
 * emits, service.md section 6, and agent.status_changed), and the patterns over them. Only
 * events that fire: a hook saved on a name nothing emits would never run, and say nothing of it.
 */
export function hookEvents(stored: readonly StoredEventType[]): HookEvent[] {
  const families = [...new Set(stored.map((t) => t.name.slice(0, t.name.indexOf('.'))))];
  return [
    ...stored.map((t) => ({ name: t.name, pattern: false, description: t.description })),
    ...families.map((family) => ({ name: `${family}.*`, pattern: true, description: `every ${family} event` })),
    { name: '*', pattern: true, description: 'every event' },
  ];
}

export interface HookRow {
  id: number;
  name: string;
  event_type: string;
  stack: string | null;
  enabled: number;
  priority: number;
  timeout_ms: number;
  retries: number;
  script: string;
  created_at: string;
  updated_at: string;
}

/** A hook as the API shows it. */
export interface Hook {
  id: number;
  name: string;
  event_type: string;
  stack: string | null;
  enabled: boolean;
  priority: number;
  /** Seconds. */
  timeout: number;
  retries: number;
  script: string;
  created_at: string;
  updated_at: string;
  /** Executions kept in the history (the newest HISTORY_PER_HOOK). */
  executions: number;
  /** Percent of those that succeeded; null before the first. */
  success_rate: number | null;
  /** ISO 8601 of the newest execution, or null. */
  last_execution: string | null;
}

interface HookStats {
  executions: number;
  successes: number;
  last: number | null;
}

export interface HookExecution {
  id: number;
  /** ISO 8601. */
  executed_at: string;
  event_id: string;
  event_type: string;
  attempt: number;
  success: boolean;
  duration_ms: number;
  output: string | null;
  error: string | null;
}

/** An execution as `record` is given it. */
export type ExecutionRecord = Omit<HookExecution, 'id' | 'executed_at'> & { executedAt: number };

export interface HookInput {
  name?: string;
  event_type?: string;
  stack?: string | null;
  enabled?: boolean;
  priority?: number;
  timeout?: number;
  retries?: number;
  script?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const NAME_RULE = 'letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit, not all digits)';

/** An event name or pattern a hook may name (one of `names`): the error says what is accepted. */
function checkEventType(value: string, names: readonly string[]): string {
  if (names.includes(value)) return value;
  throw new InvalidInputError(
    `event_type: "${value}" is not a hook event${didYouMean(value, [...names])}: use one of ${names.join(', ')} (runner hook events)`,
    { field: 'event_type' },
  );
}

/** Whether a hook naming `pattern` fires on `type`. */
export function eventMatches(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

export function capText(text: string | undefined, bytes = OUTPUT_BYTES): string | undefined {
  if (text === undefined || Buffer.byteLength(text) <= bytes) return text;
  const kept = Buffer.from(text)
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return `${kept} … [truncated: ${Buffer.byteLength(text)} bytes; the history keeps ${bytes}]`;
}

function checkInteger(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new InvalidInputError(`${field}: must be a whole number from ${min} to ${max}`, { field });
  return value;
}

/** The columns a create or an update writes, in the order `written` gives their values. */
const WRITTEN = ['name', 'event_type', 'stack', 'enabled', 'priority', 'timeout_ms', 'retries', 'script'] as const;
const written = (fields: HookFields) => WRITTEN.map((c) => fields[c]);

/** A hook's columns as a create or an update writes them, checked. */
type HookFields = Pick<HookRow, (typeof WRITTEN)[number]>;

/** A declaration (GitOps' manifest) made whole: a field it leaves out returns to its default. */
const whole = (hook: HookDeclaration): HookInput => ({
  enabled: true,
  priority: DEFAULT_PRIORITY,
  timeout: DEFAULT_TIMEOUT_SECONDS,
  retries: 0,
  stack: null,
  ...hook,
});

const sameOrUpdated = (fields: HookFields, row: HookRow) =>
  WRITTEN.every((column) => fields[column] === row[column]) ? ('unchanged' as const) : ('updated' as const);

/**
 * Hooks in the master's store, with a copy in memory (the queue asks which hooks match each event,
 * synchronously); every write is read back, and other masters are told to read it too.
 */
export class HookStore {
  private readonly hooks = new Map<number, HookRow>();
  private byType = new Map<string, HookRow[]>();
  private writesSincePrune = new Map<number, number>();
  private readonly records = new TurnBatch<{ hookId: number; execution: ExecutionRecord }, void>((batch) =>
    this.writeRecords(batch),
  );

  constructor(
    private readonly store: Store,
    /** Checks a script compiles (throws an InvalidInputError with line and column). */
    private readonly compile: (script: string, name: string) => void,
    private readonly onChange: (hook: { id: number; name: string }, change: 'created' | 'updated' | 'deleted') => void,
    /** What hooks may name (hookEvents of the queue's stored types). */
    readonly events: readonly HookEvent[],
    /** Says whether a stack exists (the stacks plugin's service), when it is loaded. */
    private readonly stacks?: Pick<Stacks, 'check'>,
    /** Told when reading a hook again after its committed change failed (the change stands). */
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {
    this.eventNames = events.map((event) => event.name);
  }

  private readonly eventNames: readonly string[];

  async open(): Promise<void> {
    await this.store.migrate('event-hooks', HOOK_MIGRATIONS);
    for (const row of await this.store.all<HookRow>('SELECT * FROM hooks')) this.hooks.set(row.id, row);
    this.byType.clear();
  }

  /** Reads one hook again (after a write here, or another master's). */
  async refresh(id: number): Promise<HookRow | undefined> {
    const row = await this.store.get<HookRow>('SELECT * FROM hooks WHERE id = ?', [id]);
    if (row) this.hooks.set(id, row);
    else this.hooks.delete(id);
    this.byType.clear();
    return row;
  }

  /**
   * The enabled hooks for an event of `type` from a run of `stack` (none: not a run's event, or a
   * run without a stack), lowest priority number first, ties by id. A hook of a stack fires only
   * for that stack's runs; one without fires for all.
   */
  matching(type: string, stack?: string): HookRow[] {
    const key = stack === undefined ? type : `${type} ${stack}`;
    let list = this.byType.get(key);
    if (!list) {
      list = [...this.hooks.values()]
        .filter((h) => h.enabled && eventMatches(h.event_type, type) && (h.stack === null || h.stack === stack))
        .sort((a, b) => a.priority - b.priority || a.id - b.id);
      this.byType.set(key, list);
    }
    return list;
  }

  row(id: number): HookRow | undefined {
    return this.hooks.get(id);
  }

  /** Every hook, in the order they run, with `executions` and `success_rate` from the kept history. */
  async list(): Promise<Hook[]> {
    const stats = await this.stats();
    return [...this.hooks.values()]
      .sort((a, b) => a.priority - b.priority || a.id - b.id)
      .map((h) => this.show(h, stats.get(h.id)));
  }

  /** One hook, by id or name, with its counts. */
  async get(ref: string): Promise<Hook> {
    const row = this.require(ref);
    return this.show(row, (await this.stats(row.id)).get(row.id));
  }

  /** Executions, successes and the newest execution per hook: counted over the capped history. */
  private async stats(hookId?: number): Promise<Map<number, HookStats>> {
    const rows = await this.store.all<{ hook_id: number; n: number; ok: number | null; last: number | null }>(
      `SELECT hook_id, COUNT(*) AS n, SUM(success) AS ok, MAX(executed_at) AS last FROM hook_executions
       ${hookId === undefined ? '' : 'WHERE hook_id = ?'} GROUP BY hook_id`,
      hookId === undefined ? [] : [hookId],
    );
    return new Map(rows.map((r) => [r.hook_id, { executions: r.n, successes: r.ok ?? 0, last: r.last }]));
  }

  counts(): { total: number; enabled: number } {
    const all = [...this.hooks.values()];
    return { total: all.length, enabled: all.filter((h) => h.enabled).length };
  }

  /** A hook by id, or by name (service.md's other listing names hooks by name). */
  require(ref: string): HookRow {
    const byId = /^\d+$/.test(ref) ? this.hooks.get(Number(ref)) : undefined;
    const found = byId ?? [...this.hooks.values()].find((h) => h.name === ref);
    if (found) return found;
    const names = [...this.hooks.values()].map((h) => h.name);
    throw new NotFoundError(`hook "${ref}" does not exist${didYouMean(ref, names)}`, { details: { hook: ref } });
  }

  show(row: HookRow, stats?: HookStats): Hook {
    return {
      id: row.id,
      name: row.name,
      event_type: row.event_type,
      stack: row.stack,
      enabled: row.enabled === 1,
      priority: row.priority,
      timeout: row.timeout_ms / 1000,
      retries: row.retries,
      script: row.script,
      created_at: row.created_at,
      updated_at: row.updated_at,
      executions: stats?.executions ?? 0,
      success_rate: stats?.executions ? Math.round((stats.successes / stats.executions) * 1000) / 10 : null,
      last_execution: stats?.last ? new Date(stats.last).toISOString() : null,
    };
  }

  async create(input: HookInput): Promise<Hook> {
    const fields = this.checked(input, undefined);
    await checkStackField(this.stacks, fields.stack);
    if ([...this.hooks.values()].some((h) => h.name === fields.name))
      throw new ConflictError(`hook "${fields.name}" already exists`, { details: { hook: fields.name } });
    const id = await this.inUnit(undefined, (unit) => this.insertIn(unit, fields));
    return this.get(String(id));
  }

  async update(ref: string, input: HookInput): Promise<Hook> {
    const current = this.require(ref);
    const fields = this.checked(input, current);
    if (fields.stack !== current.stack) await checkStackField(this.stacks, fields.stack);
    if (fields.name !== current.name && [...this.hooks.values()].some((h) => h.name === fields.name))
      throw new ConflictError(`hook "${fields.name}" already exists`, { details: { hook: fields.name } });
    await this.inUnit(undefined, (unit) => this.updateIn(unit, current.id, fields));
    return this.get(String(current.id));
  }

  async delete(ref: string): Promise<void> {
    const hook = this.require(ref);
    await this.inUnit(undefined, (unit) => this.deleteIn(unit, hook));
  }

  /** Joins the caller's unit of work, or opens one: every write of a hook goes through one. */
  private inUnit<T>(unit: UnitOfWork | undefined, work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
    return inUnitOfWork(this.store, unit, work, (error) =>
      this.logger?.warn(`reading a hook again after its change failed: ${error.message}`),
    );
  }

  private async insertIn(unit: UnitOfWork, fields: HookFields): Promise<number> {
    const at = new Date().toISOString();
    await unit.tx.run(
      `INSERT INTO hooks (${WRITTEN.join(', ')}, updated_at, created_at) VALUES (${WRITTEN.map(() => '?').join(', ')}, ?, ?)`,
      [...written(fields), at, at],
    );
    const row = await unit.tx.get<{ id: number }>('SELECT id FROM hooks WHERE name = ?', [fields.name]);
    const id = Number(row!.id);
    this.announceAfter(unit, id, 'created');
    return id;
  }

  private async updateIn(unit: UnitOfWork, id: number, fields: HookFields): Promise<void> {
    await unit.tx.run(`UPDATE hooks SET ${WRITTEN.map((c) => `${c} = ?`).join(', ')}, updated_at = ? WHERE id = ?`, [
      ...written(fields),
      new Date().toISOString(),
      id,
    ]);
    this.announceAfter(unit, id, 'updated');
  }

  private async deleteIn(unit: UnitOfWork, hook: { id: number; name: string }): Promise<void> {
    await unit.tx.run('DELETE FROM hook_executions WHERE hook_id = ?', [hook.id]);
    await unit.tx.run('DELETE FROM hooks WHERE id = ?', [hook.id]);
    this.announceAfter(unit, hook.id, 'deleted', hook.name);
  }

  /** Once the unit committed: the copy in memory read again, then this master's and the others' listeners told. */
  private announceAfter(unit: UnitOfWork, id: number, change: 'created' | 'updated' | 'deleted', name = ''): void {
    unit.afterCommit(async () => {
      const row = await this.refresh(id);
      this.onChange({ id, name: row?.name ?? name }, change);
    });
  }

  /**
   * HooksService for other plugins (GitOps' manifest): hooks by name, written whole (a field left
   * out of a declaration returns to its default).
   */
  asService(): HooksService {
    const find = (name: string) => [...this.hooks.values()].find((h) => h.name === name);
    const compare = (hook: HookDeclaration) => {
      const fields = this.checked(whole(hook), undefined);
      const row = find(hook.name);
      return row ? sameOrUpdated(fields, row) : 'created';
    };
    return {
      compare,
      check: async (hook) => {
        await checkStackField(this.stacks, this.checked(whole(hook), undefined).stack);
      },
      put: async (hook, unit) => {
        const fields = this.checked(whole(hook), undefined);
        // Inside a unit the stacks service must not read the store the unit holds: `check` did.
        if (!unit) await checkStackField(this.stacks, fields.stack);
        return this.inUnit(unit, (joined) => this.putIn(joined, fields));
      },
      remove: (name, unit) =>
        this.inUnit(unit, async (joined) => {
          const row = await joined.tx.get<{ id: number }>('SELECT id FROM hooks WHERE name = ?', [name]);
          if (row) await this.deleteIn(joined, { id: Number(row.id), name });
          return row !== undefined;
        }),
    };
  }

  /** A declared hook written whole: read through the unit, which sees other masters' commits and its own writes. */
  private async putIn(unit: UnitOfWork, fields: HookFields): Promise<'created' | 'updated' | 'unchanged'> {
    const row = await unit.tx.get<HookRow>('SELECT * FROM hooks WHERE name = ?', [fields.name]);
    if (!row) {
      await this.insertIn(unit, fields);
      return 'created';
    }
    const change = sameOrUpdated(fields, row);
    if (change === 'updated') await this.updateIn(unit, Number(row.id), fields);
    return change;
  }

  /** The whole row a create or update writes: given fields checked, the others as they were. */
  private checked(input: HookInput, current: HookRow | undefined): HookFields {
    const name = input.name ?? current?.name;
    if (typeof name !== 'string' || !NAME.test(name) || /^\d+$/.test(name))
      throw new InvalidInputError(`name: hook name ${JSON.stringify(name)} is not valid: use ${NAME_RULE}`, {
        field: 'name',
      });
    const eventType = input.event_type ?? current?.event_type;
    if (typeof eventType !== 'string')
      throw new InvalidInputError('event_type: give the event the hook runs on', { field: 'event_type' });
    const script = input.script ?? current?.script;
    if (typeof script !== 'string' || script.trim() === '')
      throw new InvalidInputError('script: give the Lua script the hook runs', { field: 'script' });
    if (Buffer.byteLength(script) > MAX_SCRIPT_BYTES)
      throw new InvalidInputError(`script: at most ${MAX_SCRIPT_BYTES} bytes`, { field: 'script' });
    if (input.script !== undefined || !current) this.compile(script, name);
    const timeout = input.timeout ?? (current ? current.timeout_ms / 1000 : DEFAULT_TIMEOUT_SECONDS);
    return {
      name,
      event_type: checkEventType(eventType, this.eventNames),
      stack: input.stack === undefined ? (current?.stack ?? null) : input.stack || null,
      enabled: (input.enabled ?? (current ? current.enabled === 1 : true)) ? 1 : 0,
      priority: checkInteger(
        input.priority ?? current?.priority ?? DEFAULT_PRIORITY,
        'priority',
        -1_000_000,
        1_000_000,
      ),
      timeout_ms: Math.round(
        (typeof timeout === 'number' && timeout > 0 && timeout <= MAX_TIMEOUT_SECONDS
          ? timeout
          : checkInteger(timeout, 'timeout', 1, MAX_TIMEOUT_SECONDS)) * 1000,
      ),
      retries: checkInteger(input.retries ?? current?.retries ?? 0, 'retries', 0, MAX_RETRIES),
      script,
    };
  }

  /**
   * Keeps one execution in the hook's history (the oldest beyond HISTORY_PER_HOOK go now and then).
   * The executions of one turn are written together (the queue runs many events' hooks at once).
   */
  record(hookId: number, execution: ExecutionRecord): Promise<void> {
    return this.records.add({ hookId, execution });
  }

  private async writeRecords(batch: { hookId: number; execution: ExecutionRecord }[]): Promise<void> {
    const params: SqlValue[] = [];
    for (const { hookId, execution } of batch)
      params.push(
        hookId,
        execution.executedAt,
        execution.event_id,
        execution.event_type,
        execution.attempt,
        execution.success ? 1 : 0,
        Math.round(execution.duration_ms),
        capText(execution.output ?? undefined) ?? null,
        capText(execution.error ?? undefined) ?? null,
      );
    await this.store.run(
      `INSERT INTO hook_executions (hook_id, executed_at, event_id, event_type, attempt, success, duration_ms, output, error)
       VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      params,
    );
    for (const { hookId } of batch) {
      const writes = (this.writesSincePrune.get(hookId) ?? 0) + 1;
      this.writesSincePrune.set(hookId, writes);
      if (writes >= 50) {
        this.writesSincePrune.set(hookId, 0);
        await this.prune(hookId);
      }
    }
  }

  /** Drops the executions past the newest HISTORY_PER_HOOK. */
  private async prune(hookId: number): Promise<void> {
    const bound = await this.store.get<{ id: number }>(
      'SELECT id FROM hook_executions WHERE hook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
      [hookId, HISTORY_PER_HOOK],
    );
    if (!bound) return;
    await this.store.run('DELETE FROM hook_executions WHERE hook_id = ? AND id <= ?', [hookId, bound.id]);
  }

  async history(ref: string, limit: number, offset: number): Promise<{ executions: HookExecution[]; total: number }> {
    const hook = this.require(ref);
    const rows = await this.store.all<
      Omit<HookExecution, 'executed_at' | 'success'> & { executed_at: number; success: number }
    >(
      'SELECT id, executed_at, event_id, event_type, attempt, success, duration_ms, output, error FROM hook_executions WHERE hook_id = ? ORDER BY id DESC LIMIT ? OFFSET ?',
      [hook.id, limit, offset],
    );
    const total = await this.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM hook_executions WHERE hook_id = ?', [
      hook.id,
    ]);
    return {
      executions: rows.map((r) => ({
        ...r,
        executed_at: new Date(r.executed_at).toISOString(),
        success: r.success === 1,
      })),
      total: total?.n ?? 0,
    };
  }
}
