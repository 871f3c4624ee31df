import { createHash } from 'node:crypto';
import {
  ConflictError,
  InvalidInputError,
  RunnerError,
  type SqlValue,
  type Store,
  type StoreReader,
  type StoreSchema,
} from '@runner/plugin-sdk';

/**
 * Copies every table of one store into another, across backends (`runner db copy`, and the
 * logical backup of PostgreSQL, which is a copy into an embedded database image). The schema on
 * the target comes from the plugins' own migrations (their `schema` declarations), never from
 * translating the source's DDL; rows go over as values; each table is then verified by its row
 * count and an order-free checksum computed the same way on both sides.
 */

/**
 * Tables of the store itself are named with a leading underscore (the migration record, rebuilt
 * by migrating; the snapshot's meta; PostgreSQL's message spill table): never copied.
 */
const isStoreTable = (name: string) => name.startsWith('_');
/** Rows read per query when paging a table by its primary key. */
const PAGE_ROWS = 2_000;
/** Bound parameters per INSERT (SQLite allows 32,766; PostgreSQL 65,535). */
const PARAMS_PER_INSERT = 900;

export interface TableReport {
  table: string;
  rows: number;
  /** 16 hex digits: the sum of the rows' hashes, so the order rows come in does not matter. */
  checksum: string;
}

export interface CopyOptions {
  /** Replace what the target holds; otherwise a target with any row is refused. */
  overwrite?: boolean;
}

type Row = Record<string, unknown>;
type Reader = Pick<StoreReader, 'all' | 'get'> & { readonly dialect: Store['dialect'] };

function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The store's own tables (not the store's bookkeeping), by name. */
export async function listTables(store: Reader): Promise<string[]> {
  const rows =
    store.dialect === 'postgres'
      ? await store.all<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
        )
      : await store.all<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        );
  return rows.map((r) => r.name).filter((name) => !isStoreTable(name));
}

/** The primary key's columns in key order ([] when the table has none). */
async function primaryKey(store: Reader, table: string): Promise<string[]> {
  const rows =
    store.dialect === 'postgres'
      ? await store.all<{ name: string }>(
          `SELECT k.column_name AS name FROM information_schema.table_constraints c
             JOIN information_schema.key_column_usage k
               ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema
            WHERE c.table_schema = current_schema() AND c.table_name = ? AND c.constraint_type = 'PRIMARY KEY'
            ORDER BY k.ordinal_position`,
          [table],
        )
      : await store.all<{ name: string }>('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk', [table]);
  return rows.map((r) => r.name);
}

/** Tables each table references (foreign keys), so parents are filled before children. */
async function references(store: Reader, tables: readonly string[]): Promise<Map<string, string[]>> {
  const edges = new Map<string, string[]>(tables.map((t) => [t, []]));
  if (store.dialect === 'postgres') {
    const rows = await store.all<{ child: string; parent: string }>(
      `SELECT child.relname AS child, parent.relname AS parent FROM pg_constraint c
         JOIN pg_class child ON child.oid = c.conrelid JOIN pg_class parent ON parent.oid = c.confrelid
        WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
    );
    for (const { child, parent } of rows) edges.get(child)?.push(parent);
  } else {
    for (const table of tables) {
      const rows = await store.all<{ parent: string }>('SELECT "table" AS parent FROM pragma_foreign_key_list(?)', [
        table,
      ]);
      edges.set(
        table,
        rows.map((r) => r.parent),
      );
    }
  }
  return edges;
}

/** `tables` with every referenced table before the tables referencing it. */
function parentsFirst(tables: readonly string[], edges: Map<string, string[]>): string[] {
  const ordered: string[] = [];
  const placed = new Set<string>();
  const visit = (table: string, path: Set<string>) => {
    if (placed.has(table) || path.has(table)) return;
    path.add(table);
    for (const parent of edges.get(table) ?? []) if (parent !== table) visit(parent, path);
    placed.add(table);
    ordered.push(table);
  };
  for (const table of tables) visit(table, new Set());
  return ordered;
}

/**
 * Every row of `table`, a page at a time in primary-key order (keyset paging: each page starts
 * after the last key seen, so a million rows cost a million, not a million squared).
 */
async function eachPage(store: Reader, table: string, onPage: (rows: Row[]) => Promise<void> | void): Promise<void> {
  const key = await primaryKey(store, table);
  if (key.length === 0) {
    await onPage(await store.all<Row>(`SELECT * FROM ${quoted(table)}`));
    return;
  }
  const order = key.map(quoted).join(', ');
  let after: SqlValue[] | undefined;
  for (;;) {
    const where = after === undefined ? '' : `WHERE (${order}) > (${key.map(() => '?').join(', ')})`;
    const rows = await store.all<Row>(`SELECT * FROM ${quoted(table)} ${where} ORDER BY ${order} LIMIT ?`, [
      ...(after ?? []),
      PAGE_ROWS,
    ]);
    if (rows.length > 0) await onPage(rows);
    if (rows.length < PAGE_ROWS) return;
    const last = rows[rows.length - 1] as Row;
    after = key.map((column) => last[column] as SqlValue);
  }
}

/** A value as both backends give it back, in one spelling (bytes as base64, numbers as numbers). */
function canonicalValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString('base64') };
  if (typeof value === 'bigint') return Number(value);
  return value;
}

function rowHash(row: Row): bigint {
  const canonical = JSON.stringify(
    Object.keys(row)
      .sort()
      .map((column) => [column, canonicalValue(row[column])]),
  );
  return createHash('sha256').update(canonical).digest().readBigUInt64BE(0);
}

/** Row count and order-free checksum of one table. */
export async function tableReport(store: Reader, table: string): Promise<TableReport> {
  let rows = 0;
  let sum = 0n;
  await eachPage(store, table, (page) => {
    rows += page.length;
    for (const row of page) sum = (sum + rowHash(row)) & 0xffff_ffff_ffff_ffffn;
  });
  return { table, rows, checksum: sum.toString(16).padStart(16, '0') };
}

/** Applied migration ids by owner. */
async function appliedMigrations(store: Reader): Promise<Map<string, number[]>> {
  const rows = await store.all<{ owner: string; id: number }>('SELECT owner, id FROM _migrations ORDER BY owner, id');
  const applied = new Map<string, number[]>();
  for (const { owner, id } of rows) applied.set(owner, [...(applied.get(owner) ?? []), Number(id)]);
  return applied;
}

/**
 * The schemas to create on the target: those of the owners the source has migrated, which must be
 * exactly at this build's migrations (an older source is migrated by starting a master of this
 * version on it first; a newer one is copied by the newer version).
 */
async function sourceSchemas(source: Reader, schemas: readonly StoreSchema[]): Promise<StoreSchema[]> {
  const declared = new Map(schemas.map((s) => [s.owner, s]));
  const chosen: StoreSchema[] = [];
  for (const [owner, ids] of await appliedMigrations(source)) {
    const schema = declared.get(owner);
    if (schema === undefined) {
      throw new InvalidInputError(
        `the source has tables of "${owner}", which no plugin of this build declares: copy it with the runner version that wrote it`,
        { field: 'from' },
      );
    }
    const expected = schema.migrations.map((m) => m.id);
    if (ids.join(',') !== expected.join(',')) {
      throw new InvalidInputError(
        `the source's "${owner}" tables are at migration ${ids.at(-1) ?? 'none'}, this build's at ${expected.at(-1) ?? 'none'}: start a master of this version on the source once (it migrates it), or copy with the version that wrote it`,
        { field: 'from' },
      );
    }
    chosen.push(schema);
  }
  return chosen;
}

/** Refuses a target holding any row unless `overwrite`; names the first table found with rows. */
async function checkTargetEmpty(target: Store, overwrite: boolean): Promise<string[]> {
  const tables = await listTables(target);
  if (overwrite) return tables;
  for (const table of tables) {
    const row = await target.get<{ n: number }>(`SELECT count(*) AS n FROM ${quoted(table)}`);
    if (Number(row?.n ?? 0) > 0) {
      throw new ConflictError(
        `the target already holds data (table ${table}: ${row?.n} rows); --overwrite replaces everything in it`,
      );
    }
  }
  return tables;
}

/** Rows as multi-row INSERTs of at most PARAMS_PER_INSERT parameters each. */
function insertStatements(table: string, rows: readonly Row[]): { sql: string; params: SqlValue[] }[] {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0] as Row);
  const perStatement = Math.max(1, Math.floor(PARAMS_PER_INSERT / Math.max(1, columns.length)));
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const statements = [];
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    statements.push({
      sql: `INSERT INTO ${quoted(table)} (${columns.map(quoted).join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`,
      params: chunk.flatMap((row) => columns.map((c) => (row[c] ?? null) as SqlValue)),
    });
  }
  return statements;
}

/** PostgreSQL identity columns continue after the ids a copy gave explicitly. */
async function advanceIdentities(target: Store, tables: readonly string[]): Promise<void> {
  if (target.dialect !== 'postgres') return; // SQLite's AUTOINCREMENT follows explicit ids itself
  const identities = await target.all<{ table: string; column: string }>(
    'SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = \'YES\'',
  );
  for (const { table, column } of identities) {
    if (!tables.includes(table)) continue;
    await target.get(
      `SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(${quoted(column)}) FROM ${quoted(table)}), 0) + 1, false)`,
      [quoted(table), column],
    );
  }
}

/**
 * Copies `source` into `target` and verifies every table. The target's schema is created by the
 * migrations of the owners the source holds; its rows are replaced (with `overwrite`) and filled
 * in one transaction, so a failed copy leaves the target as it was.
 */
export async function copyStore(
  source: Store,
  target: Store,
  schemas: readonly StoreSchema[],
  options: CopyOptions = {},
): Promise<TableReport[]> {
  const chosen = await sourceSchemas(source, schemas);
  const transient = new Set(schemas.flatMap((s) => s.transient ?? []));
  const sourceTables = (await listTables(source)).filter((t) => !transient.has(t));
  const existing = await checkTargetEmpty(target, options.overwrite === true);
  for (const schema of chosen) await target.migrate(schema.owner, schema.migrations);
  const targetTables = await listTables(target);
  const missing = sourceTables.filter((t) => !targetTables.includes(t));
  if (missing.length > 0) {
    throw new InvalidInputError(
      `the source's table ${missing.join(', ')} is created by no plugin's migrations in this build: nothing was copied`,
      { field: 'from' },
    );
  }
  const order = parentsFirst(targetTables, await references(target, targetTables));
  await target.withTransaction(async (tx) => {
    const cleared = [...order].reverse().filter((t) => existing.includes(t) || options.overwrite === true);
    for (const table of cleared) await tx.run(`DELETE FROM ${quoted(table)}`);
    for (const table of order.filter((t) => sourceTables.includes(t))) {
      await eachPage(source, table, async (rows) => {
        for (const statement of insertStatements(table, rows)) await tx.run(statement.sql, statement.params);
      });
    }
  });
  await advanceIdentities(target, sourceTables);
  return verifyCopy(source, target, sourceTables);
}

/** Each table's count and checksum on both sides; a difference fails naming the table. */
async function verifyCopy(source: Store, target: Store, tables: readonly string[]): Promise<TableReport[]> {
  const reports: TableReport[] = [];
  for (const table of tables) {
    const [from, to] = await Promise.all([tableReport(source, table), tableReport(target, table)]);
    if (from.rows !== to.rows || from.checksum !== to.checksum) {
      throw new RunnerError(
        'copy_mismatch',
        `table ${table} differs after the copy: source ${from.rows} rows (checksum ${from.checksum}), target ${to.rows} rows (checksum ${to.checksum})`,
        { status: 500 },
      );
    }
    reports.push(from);
  }
  return reports;
}
