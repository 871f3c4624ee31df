import {
  AGENT_NAME_PATTERN,
  ConflictError,
  didYouMean,
  InvalidInputError,
  NotFoundError,
  type Flow,
  type FlowBatch,
  type FlowBatchResult,
  type FlowOrigin,
  type Migration,
  type Store,
  type StoreTransaction,
  type UnitOfWork,
  type Logger,
  inUnitOfWork,
} from '@runner/plugin-sdk';
import { diffLines, type FlowDiff } from './diff.js';

export const FLOW_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'saved flows, their versions, and the slots of their runs (concurrency and statistics)',
    sql: `CREATE TABLE flows (
      name TEXT PRIMARY KEY,
      description TEXT NOT NULL DEFAULT '',
      tags TEXT NOT NULL DEFAULT '',
      active INTEGER NOT NULL DEFAULT 1,
      version INTEGER NOT NULL,
      concurrency_limit INTEGER,
      concurrency_behavior TEXT,
      runs_total INTEGER NOT NULL DEFAULT 0,
      runs_succeeded INTEGER NOT NULL DEFAULT 0,
      runs_seconds REAL NOT NULL DEFAULT 0,
      last_run_id TEXT,
      last_run_at TEXT,
      last_run_status TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE flow_versions (
      flow TEXT NOT NULL,
      version INTEGER NOT NULL,
      yaml TEXT NOT NULL,
      author TEXT NOT NULL DEFAULT '',
      message TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL,
      PRIMARY KEY (flow, version)
    );
    CREATE TABLE flow_slots (
      id TEXT PRIMARY KEY,
      flow TEXT NOT NULL,
      version INTEGER NOT NULL,
      state TEXT NOT NULL,
      run_id TEXT,
      run_status TEXT,
      run_trigger TEXT NOT NULL,
      started_by TEXT,
      inactive INTEGER NOT NULL DEFAULT 0,
      vars TEXT,
      queued_at TEXT NOT NULL,
      started_at TEXT,
      ended_at TEXT
    );
    CREATE INDEX flow_slots_open ON flow_slots (flow, state, queued_at);
    CREATE INDEX flow_slots_run ON flow_slots (run_id);`,
  },
  {
    id: 2,
    description: 'the stack a queued start runs on, and whether its production run was confirmed',
    sql: `ALTER TABLE flow_slots ADD COLUMN stack TEXT;
    ALTER TABLE flow_slots ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    id: 3,
    description: 'the git commit a flow version was synced from (GitOps)',
    sql: 'ALTER TABLE flow_versions ADD COLUMN commit_id TEXT',
  },
];

export const MAX_DESCRIPTION = 2000;
export const MAX_TAGS = 20;
export const MAX_MESSAGE = 500;
export const FLOW_NAME_RULE = 'letters, digits, ".", "_" and "-" (at most 63, starting with a letter or digit)';
export const BEHAVIORS = ['queue', 'skip', 'cancel_oldest'] as const;
export type ConcurrencyBehavior = (typeof BEHAVIORS)[number];
export interface Concurrency {
  limit: number;
  behavior: ConcurrencyBehavior;
}

export interface FlowStats {
  executions: number;
  succeeded: number;
  /** Succeeded over ended runs, 0..1; null before the first run ended. */
  success_rate: number | null;
  /** Seconds; null before the first run ended. */
  average_duration: number | null;
  last_execution: { run_id: string; at: string; status: string } | null;
}

/** A flow as the API answers it. */
export interface FlowRecord extends Flow {
  concurrency: Concurrency | null;
  stats: FlowStats;
}
export type FlowSummary = Omit<FlowRecord, 'yaml'>;

export interface FlowVersion {
  version: number;
  author: string;
  message: string;
  /** The git commit a GitOps sync made it from; absent (null) for other saves. */
  commit?: string | null;
  created_at: string;
}

const VERSION_COLUMNS = 'version, author, message, commit_id AS "commit", created_at';

interface FlowRow {
  name: string;
  description: string;
  tags: string;
  active: number | boolean;
  version: number;
  concurrency_limit: number | null;
  concurrency_behavior: string | null;
  runs_total: number;
  runs_succeeded: number;
  runs_seconds: number;
  last_run_id: string | null;
  last_run_at: string | null;
  last_run_status: string | null;
  created_at: string;
  updated_at: string;
  yaml?: string;
}

/** What a save may change; `yaml` makes a new version when it differs from the current one. */
export interface FlowChange {
  yaml?: string;
  description?: string;
  tags?: string[];
  active?: boolean;
  concurrency?: Concurrency | null;
  /** The version the editor started from: a save over a newer one is refused (409). */
  base_version?: number;
  message?: string;
}

/** Checks a workflow's text before it is kept (the engine's validation: file:line:column problems). */
export type FlowValidator = (name: string, yaml: string) => Promise<void>;

// Tags are kept as `,a,b,` so that one LIKE finds a whole tag (`%,db,%`), on both backends.
const packTags = (tags: readonly string[]) => (tags.length === 0 ? '' : `,${tags.join(',')},`);
const unpackTags = (packed: string) => packed.split(',').filter(Boolean);
const SUMMARY_COLUMNS =
  'name, description, tags, active, version, concurrency_limit, concurrency_behavior, runs_total, runs_succeeded, runs_seconds, last_run_id, last_run_at, last_run_status, created_at, updated_at';

export function checkFlowName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name))
    throw new InvalidInputError(`${field}: flow name ${JSON.stringify(name)} is not valid: use ${FLOW_NAME_RULE}`, {
      field,
    });
  return name;
}

function checkTags(tags: readonly string[], field = 'tags'): string[] {
  const clean = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))].sort();
  if (clean.length > MAX_TAGS) throw new InvalidInputError(`${field}: at most ${MAX_TAGS} tags`, { field });
  for (const tag of clean)
    if (!AGENT_NAME_PATTERN.test(tag))
      throw new InvalidInputError(`${field}: tag "${tag}" is not valid: use ${FLOW_NAME_RULE}`, { field });
  return clean;
}

function checkConcurrency(concurrency: Concurrency | null | undefined): Concurrency | null {
  if (!concurrency) return null;
  if (!Number.isInteger(concurrency.limit) || concurrency.limit < 1)
    throw new InvalidInputError('concurrency.limit: a whole number of at least 1', { field: 'concurrency.limit' });
  if (!BEHAVIORS.includes(concurrency.behavior))
    throw new InvalidInputError(`concurrency.behavior: one of ${BEHAVIORS.join(', ')}`, {
      field: 'concurrency.behavior',
    });
  return { limit: concurrency.limit, behavior: concurrency.behavior };
}

function toSummary(row: FlowRow): FlowSummary {
  const ended = row.runs_total;
  return {
    name: row.name,
    description: row.description,
    tags: unpackTags(row.tags),
    active: Boolean(row.active),
    version: Number(row.version),
    created_at: row.created_at,
    updated_at: row.updated_at,
    concurrency:
      row.concurrency_limit === null
        ? null
        : { limit: Number(row.concurrency_limit), behavior: row.concurrency_behavior as ConcurrencyBehavior },
    stats: {
      executions: Number(ended),
      succeeded: Number(row.runs_succeeded),
      success_rate: ended > 0 ? Number(row.runs_succeeded) / Number(ended) : null,
      average_duration: ended > 0 ? Number(row.runs_seconds) / Number(ended) : null,
      last_execution:
        row.last_run_id === null
          ? null
          : { run_id: row.last_run_id, at: row.last_run_at as string, status: row.last_run_status as string },
    },
  };
}

/** One flow in an export file; `versions` (oldest first) only when exported with history. */
export interface ExportedFlow {
  name: string;
  description: string;
  tags: string[];
  active: boolean;
  concurrency: Concurrency | null;
  version: number;
  yaml: string;
  versions?: (FlowVersion & { yaml: string })[];
}
export interface ExportDocument {
  format: 'runner-flows';
  format_version: 1;
  exported_at: string;
  flows: ExportedFlow[];
}

/** What happened to a flow, for `onChange`: `ran` is a run's end (its statistics). */
export type FlowEvent = 'created' | 'updated' | 'deleted' | 'ran';

/** First pages of the list kept at most (one per search, tag, active and limit). */
const MAX_CACHED_PAGES = 64;

/**
 * Saved flows in the master's store. Reads go to the store, except the list's first pages (what
 * the UI and the CLI ask for, polled): each is kept until the next change to any flow, made here
 * (`changed`, called by every write of this class and by a run's end) or on another master (its
 * `flows.changed` message reaches `changed` through the cluster, so another master's list may lag
 * by that message's delay). Every write that reads before it decides (a new version over
 * `base_version`) runs in one transaction that first locks the flow's row.
 */
export class FlowStore {
  private readonly pages = new Map<string, { flows: FlowSummary[]; total: number }>();
  /** Bumped by every change: a page read before a change and answered after it is not kept. */
  private generation = 0;

  constructor(
    readonly store: Store,
    private readonly validate: FlowValidator,
    private readonly onChange: (name: string, change: FlowEvent) => void = () => {},
    private readonly now: () => Date = () => new Date(),
    /** Told when telling of a change failed after it committed (the change stands). */
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  async open(): Promise<void> {
    await this.store.migrate('flows', FLOW_MIGRATIONS);
  }

  /** Forgets the kept pages: a flow was created, changed, deleted or ran (here or on another master). */
  changed(): void {
    this.generation++;
    this.pages.clear();
  }

  /** A run of the flow ended: its statistics changed (FlowRuns, after the transaction that wrote them). */
  ran(name: string): void {
    this.announce(name, 'ran');
  }

  private announce(name: string, change: FlowEvent): void {
    this.changed();
    this.onChange(name, change);
  }

  /** The list's pages; first pages are shared between callers, who must not change them. */
  async list(filter: { search?: string; tag?: string; active?: boolean; limit?: number; offset?: number } = {}) {
    const key = filter.offset ? undefined : [filter.search, filter.tag, filter.active, filter.limit].join('\0');
    const cached = key === undefined ? undefined : this.pages.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const page = await this.readPage(filter);
    if (key !== undefined && generation === this.generation) {
      if (this.pages.size >= MAX_CACHED_PAGES) this.pages.clear();
      this.pages.set(key, page);
    }
    return page;
  }

  private async readPage(filter: { search?: string; tag?: string; active?: boolean; limit?: number; offset?: number }) {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.search) {
      const like = `%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(
        "(lower(name) LIKE ? ESCAPE '\\' OR lower(description) LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\')",
      );
      params.push(like, like, like);
    }
    if (filter.tag) {
      where.push('tags LIKE ?');
      params.push(`%,${filter.tag.toLowerCase()},%`);
    }
    if (filter.active !== undefined) {
      where.push('active = ?');
      params.push(filter.active ? 1 : 0);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [rows, total] = await Promise.all([
      this.store.all<FlowRow>(`SELECT ${SUMMARY_COLUMNS} FROM flows ${clause} ORDER BY name LIMIT ? OFFSET ?`, [
        ...params,
        filter.limit ?? 100,
        filter.offset ?? 0,
      ]),
      this.store.get<{ n: number }>(`SELECT count(*) AS n FROM flows ${clause}`, params),
    ]);
    return { flows: rows.map(toSummary), total: Number(total?.n ?? 0) };
  }

  async count(): Promise<{ total: number; active: number }> {
    const row = await this.store.get<{ total: number; active: number | null }>(
      'SELECT count(*) AS total, sum(active) AS active FROM flows',
    );
    return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0) };
  }

  /**
   * Names of the flows whose current YAML holds `word` not followed by a letter, digit or `_`
   * (`secrets.db` is not in `secrets.db_password`): the secrets page's "used by".
   */
  async referencing(word: string): Promise<string[]> {
    const like = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.store.all<{ name: string; yaml: string }>(
      "SELECT f.name, v.yaml FROM flows f JOIN flow_versions v ON v.flow = f.name AND v.version = f.version WHERE v.yaml LIKE ? ESCAPE '\\' ORDER BY f.name",
      [like],
    );
    const whole = new RegExp(`${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`);
    return rows.filter((row) => whole.test(row.yaml)).map((row) => row.name);
  }

  async get(name: string): Promise<FlowRecord | undefined> {
    const row = await this.store.get<FlowRow>(
      `SELECT f.${SUMMARY_COLUMNS.split(', ').join(', f.')}, v.yaml FROM flows f JOIN flow_versions v ON v.flow = f.name AND v.version = f.version WHERE f.name = ?`,
      [name],
    );
    return row ? { ...toSummary(row), yaml: row.yaml as string } : undefined;
  }

  /** The flow, or a NotFoundError with the nearest name. */
  async require(name: string): Promise<FlowRecord> {
    const flow = await this.get(name);
    if (flow) return flow;
    const names = (await this.store.all<{ name: string }>('SELECT name FROM flows ORDER BY name LIMIT 1000')).map(
      (r) => r.name,
    );
    throw new NotFoundError(`flow "${name}" does not exist${didYouMean(name, names)}`, { details: { flow: name } });
  }

  async create(
    input: {
      name: string;
      yaml: string;
      description?: string;
      tags?: string[];
      active?: boolean;
      concurrency?: Concurrency | null;
      message?: string;
    },
    author: string,
  ): Promise<FlowRecord> {
    const name = checkFlowName(input.name);
    const tags = checkTags(input.tags ?? []);
    const concurrency = checkConcurrency(input.concurrency);
    await this.validate(name, input.yaml);
    const at = this.now().toISOString();
    try {
      await this.store.transaction(
        this.insertStatements({
          name,
          description: (input.description ?? '').trim(),
          tags,
          active: input.active ?? true,
          concurrency,
          version: 1,
          yaml: input.yaml,
          versions: [{ version: 1, author, message: input.message ?? 'created', created_at: at, yaml: input.yaml }],
          at,
        }),
      );
    } catch (error) {
      if (error instanceof ConflictError)
        throw new ConflictError(`flow "${name}" already exists`, { details: { flow: name } });
      throw error;
    }
    this.announce(name, 'created');
    return this.require(name);
  }

  private insertStatements(flow: ExportedFlow & { at: string; versions: (FlowVersion & { yaml: string })[] }) {
    return [
      {
        sql: `INSERT INTO flows (name, description, tags, active, version, concurrency_limit, concurrency_behavior, created_at, updated_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        params: [
          flow.name,
          flow.description,
          packTags(flow.tags),
          flow.active ? 1 : 0,
          flow.version,
          flow.concurrency?.limit ?? null,
          flow.concurrency?.behavior ?? null,
          flow.versions[0]?.created_at ?? flow.at,
          flow.at,
        ],
      },
      ...flow.versions.map((v) => ({
        sql: 'INSERT INTO flow_versions (flow, version, yaml, author, message, commit_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        params: [flow.name, v.version, v.yaml, v.author, v.message, v.commit ?? null, v.created_at],
      })),
    ];
  }

  /**
   * Changes a flow. New YAML (different from the current version's) is validated and becomes the
   * next version; a `base_version` older than the current one is refused with a ConflictError
   * whose details say what changed since (the versions and the diff), and nothing is written.
   */
  async update(name: string, change: FlowChange, author: string): Promise<FlowRecord> {
    const current = await this.require(name);
    const tags = change.tags === undefined ? undefined : checkTags(change.tags);
    const concurrency = change.concurrency === undefined ? undefined : checkConcurrency(change.concurrency);
    const newYaml = change.yaml !== undefined && change.yaml !== current.yaml ? change.yaml : undefined;
    if (newYaml !== undefined) await this.validate(name, newYaml);
    const at = this.now().toISOString();
    const stale = await this.store.withTransaction(async (tx) => {
      // The row lock (PostgreSQL) orders two saves of one flow, on one master or several.
      await lockFlow(tx, name);
      const row = await tx.get<{ version: number }>('SELECT version FROM flows WHERE name = ?', [name]);
      if (!row) return undefined;
      const version = Number(row.version);
      if (change.base_version !== undefined && change.base_version !== version && newYaml !== undefined) return version;
      const sets: string[] = [];
      const params: (string | number | null)[] = [];
      const set = (column: string, value: string | number | null) => {
        sets.push(`${column} = ?`);
        params.push(value);
      };
      set('updated_at', at);
      if (change.description !== undefined) set('description', change.description.trim());
      if (tags !== undefined) set('tags', packTags(tags));
      if (change.active !== undefined) set('active', change.active ? 1 : 0);
      if (concurrency !== undefined) {
        set('concurrency_limit', concurrency?.limit ?? null);
        set('concurrency_behavior', concurrency?.behavior ?? null);
      }
      if (newYaml !== undefined) {
        set('version', version + 1);
        await tx.run(
          'INSERT INTO flow_versions (flow, version, yaml, author, message, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          [name, version + 1, newYaml, author, (change.message ?? '').slice(0, MAX_MESSAGE), at],
        );
      }
      await tx.run(`UPDATE flows SET ${sets.join(', ')} WHERE name = ?`, [...params, name]);
      return undefined;
    });
    if (stale !== undefined) throw await this.staleSave(name, change.base_version as number, stale);
    this.announce(name, 'updated');
    return this.require(name);
  }

  /** The 409 of a save over a newer version: what was saved since, and the diff to now. */
  private async staleSave(name: string, base: number, current: number): Promise<ConflictError> {
    const since = await this.store.all<FlowVersion>(
      `SELECT ${VERSION_COLUMNS} FROM flow_versions WHERE flow = ? AND version > ? ORDER BY version`,
      [name, base],
    );
    const diff = await this.diff(name, base, current).catch(() => undefined);
    const who = since.map((v) => `${v.version} by ${v.author || 'unknown'}`).join(', ');
    return new ConflictError(
      `flow "${name}" changed since version ${base} (now ${current}: ${who}); reload it and apply your change again`,
      { details: { flow: name, base_version: base, current_version: current, versions: since, diff: diff?.unified } },
    );
  }

  /**
   * FlowsService.applyBatch: every YAML validated (unless the caller's unit did it), then one
   * transaction that locks each flow's row before it reads its version, so a save made meanwhile
   * is ordered with it on every master; browsers and masters hear of it once it committed.
   */
  async applyBatch(batch: FlowBatch, origin: FlowOrigin, unit?: UnitOfWork): Promise<FlowBatchResult> {
    const saves = batch.save.map((flow) => ({ ...flow, name: checkFlowName(flow.name, `save.${flow.name}`) }));
    // Inside a unit the engine must not run: its contributors may read the store the unit holds.
    if (!unit) for (const flow of saves) await this.validate(flow.name, flow.yaml);
    const written = { ...origin, at: this.now().toISOString(), message: origin.message.slice(0, MAX_MESSAGE) };
    return inUnitOfWork(
      this.store,
      unit,
      async (joined) => {
        const result = await this.writeBatch(joined.tx, saves, batch.remove, written);
        joined.afterCommit(() => this.announceBatch(result));
        return result;
      },
      (error) => this.logger?.warn(`telling of a batch of flow changes failed: ${error.message}`),
    );
  }

  private async writeBatch(
    tx: StoreTransaction,
    saves: FlowBatch['save'],
    removals: readonly string[],
    origin: FlowOrigin & { at: string },
  ): Promise<FlowBatchResult> {
    const result: FlowBatchResult = { created: [], updated: [], unchanged: [], removed: [] };
    for (const flow of saves) {
      await lockFlow(tx, flow.name);
      const row = await tx.get<{ version: number; yaml: string }>(
        'SELECT f.version, v.yaml FROM flows f JOIN flow_versions v ON v.flow = f.name AND v.version = f.version WHERE f.name = ?',
        [flow.name],
      );
      if (row && row.yaml === flow.yaml) {
        result.unchanged.push({ name: flow.name, version: Number(row.version) });
        continue;
      }
      const version = row ? Number(row.version) + 1 : 1;
      if (row)
        await tx.run('UPDATE flows SET version = ?, updated_at = ? WHERE name = ?', [version, origin.at, flow.name]);
      else
        await tx.run(
          'INSERT INTO flows (name, description, tags, active, version, created_at, updated_at) VALUES (?, ?, ?, 1, 1, ?, ?)',
          [flow.name, (flow.description ?? '').trim(), '', origin.at, origin.at],
        );
      await tx.run(
        'INSERT INTO flow_versions (flow, version, yaml, author, message, commit_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [flow.name, version, flow.yaml, origin.author, origin.message, origin.commit ?? null, origin.at],
      );
      (row ? result.updated : result.created).push({ name: flow.name, version });
    }
    for (const name of removals) {
      const gone = await tx.run('DELETE FROM flows WHERE name = ?', [name]);
      if (gone.changes === 0) continue;
      await tx.run('DELETE FROM flow_versions WHERE flow = ?', [name]);
      await tx.run("DELETE FROM flow_slots WHERE flow = ? AND state = 'queued'", [name]);
      result.removed.push(name);
    }
    return result;
  }

  private announceBatch(result: FlowBatchResult): void {
    for (const { name } of result.created) this.announce(name, 'created');
    for (const { name } of result.updated) this.announce(name, 'updated');
    for (const name of result.removed) this.announce(name, 'deleted');
  }

  async remove(name: string): Promise<void> {
    await this.require(name);
    await this.store.transaction([
      { sql: 'DELETE FROM flow_versions WHERE flow = ?', params: [name] },
      { sql: "DELETE FROM flow_slots WHERE flow = ? AND state = 'queued'", params: [name] },
      { sql: 'DELETE FROM flows WHERE name = ?', params: [name] },
    ]);
    this.announce(name, 'deleted');
  }

  async versions(name: string): Promise<{ versions: FlowVersion[]; total: number }> {
    await this.require(name);
    const versions = await this.store.all<FlowVersion>(
      `SELECT ${VERSION_COLUMNS} FROM flow_versions WHERE flow = ? ORDER BY version DESC`,
      [name],
    );
    return { versions: versions.map((v) => ({ ...v, version: Number(v.version) })), total: versions.length };
  }

  async version(name: string, version: number): Promise<FlowVersion & { yaml: string }> {
    const row = await this.store.get<FlowVersion & { yaml: string }>(
      `SELECT ${VERSION_COLUMNS}, yaml FROM flow_versions WHERE flow = ? AND version = ?`,
      [name, version],
    );
    if (row) return { ...row, version: Number(row.version) };
    const flow = await this.require(name);
    throw new NotFoundError(`flow "${name}" has no version ${version} (versions 1 to ${flow.version})`, {
      details: { flow: name, version },
    });
  }

  async diff(name: string, from: number, to: number): Promise<FlowDiff & { from: number; to: number }> {
    const [a, b] = await Promise.all([this.version(name, from), this.version(name, to)]);
    return { from, to, ...diffLines(a.yaml, b.yaml, `${name}@${from}`, `${name}@${to}`) };
  }

  /** A restore is a new version holding an old one's YAML (history is never rewritten). */
  async restore(name: string, version: number, author: string, baseVersion?: number): Promise<FlowRecord> {
    const old = await this.version(name, version);
    return this.update(
      name,
      { yaml: old.yaml, base_version: baseVersion, message: `restored version ${version}` },
      author,
    );
  }

  async clone(name: string, target: string, author: string): Promise<FlowRecord> {
    const flow = await this.require(name);
    return this.create(
      {
        name: target,
        yaml: flow.yaml,
        description: flow.description,
        tags: flow.tags,
        active: false,
        concurrency: flow.concurrency,
        message: `cloned from ${name} version ${flow.version}`,
      },
      author,
    );
  }

  async exportFlows(names: string[] | undefined, history: boolean): Promise<ExportDocument> {
    const chosen = names?.length
      ? names
      : (await this.store.all<{ name: string }>('SELECT name FROM flows ORDER BY name')).map((r) => r.name);
    const flows: ExportedFlow[] = [];
    for (const name of chosen) {
      const flow = await this.require(name);
      const item: ExportedFlow = {
        name: flow.name,
        description: flow.description,
        tags: flow.tags,
        active: flow.active,
        concurrency: flow.concurrency,
        version: flow.version,
        yaml: flow.yaml,
      };
      if (history)
        item.versions = (
          await this.store.all<FlowVersion & { yaml: string }>(
            `SELECT ${VERSION_COLUMNS}, yaml FROM flow_versions WHERE flow = ? ORDER BY version`,
            [name],
          )
        ).map((v) => ({ ...v, version: Number(v.version) }));
      flows.push(item);
    }
    return { format: 'runner-flows', format_version: 1, exported_at: this.now().toISOString(), flows };
  }

  /**
   * Imports an export file in one transaction: every flow is checked first (names, the current
   * YAML validated, no name taken or repeated); any conflict refuses the whole file with a
   * ConflictError listing them all, and nothing is written.
   */
  async importFlows(document: ExportDocument, author: string): Promise<{ imported: string[] }> {
    const at = this.now().toISOString();
    const seen = new Set<string>();
    const conflicts: { name: string; reason: string }[] = [];
    const prepared = [];
    for (const [i, flow] of document.flows.entries()) {
      const name = checkFlowName(flow.name, `flows[${i}].name`);
      if (seen.has(name)) conflicts.push({ name, reason: 'appears twice in the file' });
      seen.add(name);
      const versions = flow.versions?.length
        ? flow.versions
        : [{ version: 1, yaml: flow.yaml, author, message: 'imported', created_at: at }];
      const last = versions[versions.length - 1] as FlowVersion & { yaml: string };
      if (last.yaml !== flow.yaml)
        throw new InvalidInputError(`flows[${i}]: the last of its versions is not its yaml`, { field: `flows[${i}]` });
      await this.validate(name, flow.yaml);
      prepared.push({
        ...flow,
        name,
        tags: checkTags(flow.tags ?? [], `flows[${i}].tags`),
        concurrency: checkConcurrency(flow.concurrency),
        description: flow.description ?? '',
        version: last.version,
        versions,
        at,
      });
    }
    const names = [...seen];
    if (names.length > 0) {
      const taken = await this.store.all<{ name: string }>(
        `SELECT name FROM flows WHERE name IN (${names.map(() => '?').join(', ')})`,
        names,
      );
      const existing = new Set(taken.map((row) => row.name));
      // In the file's order, so the message reads as the file does.
      for (const name of names.filter((n) => existing.has(n)))
        conflicts.push({ name, reason: 'a flow of that name exists' });
    }
    if (conflicts.length > 0)
      throw new ConflictError(
        `nothing imported: ${conflicts.map((c) => `${c.name} (${c.reason})`).join(', ')}; remove or rename them first`,
        { details: { conflicts } },
      );
    try {
      await this.store.transaction(prepared.flatMap((flow) => this.insertStatements(flow)));
    } catch (error) {
      // Another save took a name between the check and the write: still all or nothing.
      if (error instanceof ConflictError)
        throw new ConflictError('nothing imported: a flow of one of these names was created meanwhile', {
          details: { conflicts: names.map((name) => ({ name, reason: 'created meanwhile' })) },
        });
      throw error;
    }
    for (const name of names) this.announce(name, 'created');
    return { imported: names };
  }
}

/** Takes the flow's row lock for the rest of the transaction (PostgreSQL; the embedded store holds all). */
export async function lockFlow(tx: StoreTransaction, name: string): Promise<void> {
  await tx.run('UPDATE flows SET name = name WHERE name = ?', [name]);
}
