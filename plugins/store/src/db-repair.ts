import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { RunnerError, type Logger } from '@runner/plugin-sdk';
import { fsyncDir, readFileIfExists, removeIfExists, replaceFileAtomically } from './durable-fs.js';
import { intactRecordsFrom, scanJournal } from './journal.js';
import { listJournals, storeLayout, type StoreLayout } from './layout.js';
import { acquireLock } from './lock.js';
import { readMark, sha256, writeMark, type StoreMark } from './mark.js';
import { INTERNAL_TABLES, SqlDatabase } from './sql-database.js';
import { configureConnection, hasSqliteHeader, loadSqlJs } from './sqljs.js';

export interface TableSalvage {
  name: string;
  /** Rows read (all of them unless `error`). */
  rows: number;
  error?: string;
}

export interface SnapshotRepair {
  path: string;
  state: 'intact' | 'none' | 'missing' | 'damaged';
  /** Why it counts as damaged or missing. */
  reason?: string;
  /** For a damaged snapshot: what could be read, table by table. */
  tables?: TableSalvage[];
  /** The last record it holds (as read, or as the mark recorded it). */
  seq: number;
}

export interface JournalRepair {
  path: string;
  /** Records applied to the repaired store. */
  applied: { from: number; to: number } | null;
  /** What was left out: from `offset` to the end of the file, and the intact records found in it. */
  dropped?: { offset: number; bytes: number; reason: string; records: { from: number; to: number } | null };
}

export interface RepairReport {
  dir: string;
  /** False when every file was intact: nothing was changed. */
  repaired: boolean;
  /** Where the original files were moved (when repaired and not a dry run). */
  movedTo?: string;
  dryRun: boolean;
  mark: { state: 'intact' | 'none' | 'unreadable'; reason?: string };
  snapshot: SnapshotRepair;
  journals: JournalRepair[];
  /** Records the mark saw acknowledged that no file holds any more. */
  missing?: { from: number; to: number };
  /** The repaired store holds every record up to this one. */
  seq: number;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function readMarkLeniently(
  layout: StoreLayout,
): Promise<{ mark: StoreMark | null; state: RepairReport['mark'] }> {
  try {
    const mark = await readMark(layout);
    return { mark, state: { state: mark === null ? 'none' : 'intact' } };
  } catch (error) {
    return { mark: null, state: { state: 'unreadable', reason: message(error) } };
  }
}

/**
 * Copies what can be read of a damaged image into `target`, table by table (sql.js has no
 * `.recover`): each table's schema, then its rows until the first read error, then the indexes.
 */
function salvageTables(SQL: SqlJsStatic, image: Uint8Array, target: Database): TableSalvage[] {
  let source: Database;
  try {
    source = new SQL.Database(image);
  } catch (error) {
    return [{ name: '(database)', rows: 0, error: message(error) }];
  }
  try {
    let schema: { type: string; name: string; sql: string }[];
    try {
      const result = source.exec('SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid');
      schema = (result[0]?.values ?? []).map(([type, name, sql]) => ({
        type: String(type),
        name: String(name),
        sql: String(sql),
      }));
    } catch (error) {
      return [{ name: '(schema)', rows: 0, error: `the table list cannot be read: ${message(error)}` }];
    }
    const tables = schema.filter((s) => s.type === 'table' && !s.name.startsWith('sqlite_'));
    const report = tables.map((table) => copyTable(source, target, table));
    for (const other of schema.filter((s) => s.type !== 'table')) {
      try {
        target.exec(other.sql);
      } catch (error) {
        report.push({ name: `${other.type} ${other.name}`, rows: 0, error: message(error) });
      }
    }
    return report;
  } finally {
    source.close();
  }
}

function copyTable(source: Database, target: Database, table: { name: string; sql: string }): TableSalvage {
  const quoted = `"${table.name.replace(/"/g, '""')}"`;
  try {
    target.exec(`DROP TABLE IF EXISTS ${quoted}`);
    target.exec(table.sql);
  } catch (error) {
    return { name: table.name, rows: 0, error: `its schema cannot be created: ${message(error)}` };
  }
  let rows = 0;
  const read = source.prepare(`SELECT * FROM ${quoted}`);
  try {
    const columns = read.getColumnNames();
    const insert = target.prepare(
      `INSERT INTO ${quoted} (${columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    try {
      while (read.step()) {
        insert.run(read.get());
        rows += 1;
      }
    } finally {
      insert.free();
    }
    return { name: table.name, rows };
  } catch (error) {
    return { name: table.name, rows, error: message(error) };
  } finally {
    read.free();
  }
}

function metaSeq(db: Database): number | undefined {
  try {
    const value = db.exec("SELECT value FROM _store_meta WHERE key = 'last_seq'")[0]?.values[0]?.[0];
    return value === undefined ? undefined : Number(value);
  } catch {
    return undefined;
  }
}

/** Loads the snapshot into a new database: as it is when intact, table by table when damaged. */
async function loadSnapshot(
  layout: StoreLayout,
  mark: StoreMark | null,
): Promise<{ db: Database; snapshot: SnapshotRepair }> {
  const SQL = await loadSqlJs();
  const image = await readFileIfExists(layout.snapshot);
  const path = layout.snapshot;
  if (image === null) {
    const db = new SQL.Database();
    if (!mark?.snapshot) return { db, snapshot: { path, state: 'none', seq: 0 } };
    const reason = `missing; ${layout.mark} says it held records up to ${mark.snapshot.seq}`;
    return { db, snapshot: { path, state: 'missing', reason, seq: 0 } };
  }
  const sum = sha256(image);
  const matches = mark?.snapshot == null || sum === mark.snapshot.sha256 || sum === mark.pending?.sha256;
  if (matches && hasSqliteHeader(image)) {
    const db = new SQL.Database(image);
    return { db, snapshot: { path, state: 'intact', seq: metaSeq(db) ?? 0 } };
  }
  const reason = hasSqliteHeader(image)
    ? `its SHA-256 differs from the one ${layout.mark} recorded`
    : 'it is not an SQLite database';
  const db = new SQL.Database();
  const tables = salvageTables(SQL, image, db);
  // The image's own record of its sequence may be what was damaged; the mark kept it too.
  const seq = metaSeq(db) ?? mark?.snapshot?.seq ?? 0;
  return { db, snapshot: { path, state: 'damaged', reason, tables, seq } };
}

/**
 * Applies the journals' records that continue `seq` in order, and stops at the first record that
 * is damaged, missing or fails: every later record depends on what came before it.
 */
async function applyJournals(
  layout: StoreLayout,
  sql: SqlDatabase,
  startSeq: number,
): Promise<{ journals: JournalRepair[]; seq: number }> {
  let seq = startSeq;
  let stopped = false;
  /** The last record of the files read so far: where the next file's records continue. */
  let previousSeq = 0;
  const journals: JournalRepair[] = [];
  for (const journal of await listJournals(layout)) {
    const data = await readFile(journal.path);
    const entry: JournalRepair = { path: journal.path, applied: null };
    journals.push(entry);
    if (stopped) {
      entry.dropped = {
        offset: 0,
        bytes: data.length,
        reason: 'an earlier journal stopped the replay',
        records: intactRecordsFrom(data, 0, 0),
      };
      continue;
    }
    let offset = 0;
    try {
      const scan = sql.withWrites(() =>
        scanJournal(journal.path, data, previousSeq, (record) => {
          offset = record.offset;
          previousSeq = record.seq;
          if (record.seq <= seq) return; // in the snapshot already
          if (record.seq !== seq + 1) throw new Error(`record ${record.seq} follows ${seq}: records are missing`);
          try {
            sql.apply(record.entry);
          } catch (error) {
            throw new Error(`record ${record.seq} cannot be applied: ${message(error)}`);
          }
          entry.applied = { from: entry.applied?.from ?? record.seq, to: record.seq };
          seq = record.seq;
        }),
      );
      if (scan.torn !== null) {
        entry.dropped = {
          offset: scan.torn.offset,
          bytes: data.length - scan.torn.offset,
          reason: scan.torn.reason,
          records: null,
        };
      }
    } catch (error) {
      const details = error instanceof RunnerError ? error.details : undefined;
      const at = typeof details?.offset === 'number' ? details.offset : offset;
      const reason = typeof details?.reason === 'string' ? details.reason : message(error);
      entry.dropped = { offset: at, bytes: data.length - at, reason, records: intactRecordsFrom(data, at, seq) };
      stopped = true;
    }
  }
  return { journals, seq };
}

function needsRepair(report: Omit<RepairReport, 'repaired' | 'dryRun'>): boolean {
  // A torn last record was never acknowledged: start-up drops it by itself.
  const tornOnly = (j: JournalRepair, last: boolean) => last && j.dropped?.records === null;
  return (
    report.mark.state === 'unreadable' ||
    (report.snapshot.state !== 'intact' && report.snapshot.state !== 'none') ||
    report.missing !== undefined ||
    report.journals.some((j, i) => j.dropped !== undefined && !tornOnly(j, i === report.journals.length - 1))
  );
}

/**
 * `runner db repair`: rebuilds the store of `dataDir` from what is intact (the snapshot, or what
 * can be read of it table by table, then the journal records that continue it), moves the
 * original files to `store/damaged-<time>/`, and writes a new snapshot and mark so a master
 * starts. Changes nothing when every file is intact, or with `dryRun`. Needs the data-directory
 * lock: refused while a master runs.
 */
export async function repairStore(
  dataDir: string,
  logger: Logger,
  options: { dryRun?: boolean } = {},
): Promise<RepairReport> {
  const lock = await acquireLock(dataDir, logger);
  try {
    const layout = storeLayout(dataDir);
    const { mark, state } = await readMarkLeniently(layout);
    const { db, snapshot } = await loadSnapshot(layout, mark);
    try {
      configureConnection(db);
      const sql = new SqlDatabase(db);
      sql.withWrites(() => db.exec(INTERNAL_TABLES));
      const { journals, seq } = await applyJournals(layout, sql, snapshot.seq);
      const acked = mark?.journal.ackedSeq ?? 0;
      const found = Math.max(seq, ...journals.map((j) => j.dropped?.records?.to ?? 0));
      const report: RepairReport = {
        dir: layout.dir,
        repaired: false,
        dryRun: options.dryRun === true,
        mark: state,
        snapshot,
        journals,
        ...(acked > found ? { missing: { from: found + 1, to: acked } } : {}),
        seq,
      };
      if (!needsRepair(report) || options.dryRun) return report;
      sql.freeStatements();
      report.movedTo = await installRepaired(layout, db, seq);
      report.repaired = true;
      logger.warn(
        `store ${layout.dir} repaired: it holds records up to ${seq}; the originals are in ${report.movedTo}`,
      );
      return report;
    } finally {
      db.close();
    }
  } finally {
    await lock.release();
  }
}

/** Writes the repaired image and its mark, keeping the original files in a new folder. */
async function installRepaired(layout: StoreLayout, db: Database, seq: number): Promise<string> {
  // The replay left the database query_only, as the store keeps it between writes.
  db.exec('PRAGMA query_only = OFF');
  db.run("INSERT OR REPLACE INTO _store_meta (key, value) VALUES ('last_seq', ?)", [String(seq)]);
  db.run("INSERT OR REPLACE INTO _store_meta (key, value) VALUES ('snapshot_at', ?)", [new Date().toISOString()]);
  const image = db.export();
  const movedTo = join(layout.dir, `damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  await mkdir(movedTo, { mode: 0o700 });
  const originals = [layout.snapshot, layout.mark, ...(await listJournals(layout)).map((j) => j.path)];
  for (const path of originals) {
    await rename(path, join(movedTo, path.slice(layout.dir.length + 1))).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  await fsyncDir(layout.dir);
  await removeIfExists(layout.snapshotTemp);
  await replaceFileAtomically(layout.snapshot, image, layout.snapshotTemp);
  // Start-up creates journal 1 again; the mark expects nothing past the new snapshot.
  await writeMark(layout, {
    version: 1,
    snapshot: { sha256: sha256(image), seq, bytes: image.length },
    journal: { generation: 1, ackedSeq: seq },
    writtenAt: new Date().toISOString(),
  });
  return movedTo;
}

const range = (r: { from: number; to: number }) =>
  r.from === r.to ? `record ${r.from}` : `records ${r.from}..${r.to}`;

/** What `runner db repair` prints: each file, what was kept and exactly what was dropped. */
export function formatRepairReport(report: RepairReport): string {
  const lines = [`store ${report.dir}`];
  if (report.mark.state === 'unreadable') lines.push(`  mark.json: unreadable (${report.mark.reason}); rewritten`);
  const { snapshot } = report;
  if (snapshot.state === 'damaged') {
    lines.push(`  ${snapshot.path}: damaged (${snapshot.reason}); read table by table:`);
    const width = Math.max(5, ...(snapshot.tables ?? []).map((t) => t.name.length));
    for (const t of snapshot.tables ?? []) {
      lines.push(
        `    ${t.name.padEnd(width)}  ${t.error ? `${t.rows} rows read, then: ${t.error}` : `${t.rows} rows`}`,
      );
    }
  } else if (snapshot.state === 'missing') lines.push(`  ${snapshot.path}: ${snapshot.reason}`);
  else if (snapshot.state === 'intact') lines.push(`  ${snapshot.path}: intact (records up to ${snapshot.seq})`);
  for (const j of report.journals) {
    const applied = j.applied ? `applied ${range(j.applied)}` : 'nothing applied';
    const dropped = j.dropped
      ? `; dropped ${j.dropped.records ? range(j.dropped.records) : 'an incomplete last record'} ` +
        `(${j.dropped.bytes} bytes from offset ${j.dropped.offset}: ${j.dropped.reason})`
      : '';
    lines.push(`  ${j.path}: ${applied}${dropped}`);
  }
  if (report.missing) {
    lines.push(`  lost: ${range(report.missing)}, acknowledged per mark.json, are in no file any more`);
  }
  if (!report.repaired) {
    lines.push(
      report.dryRun
        ? `dry run: a repair would keep every record up to ${report.seq}; nothing was changed`
        : 'every file is intact: nothing to repair, nothing was changed',
    );
  } else {
    lines.push(
      `repaired: the store holds every record up to ${report.seq}; the original files are in ${report.movedTo}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
