import { access, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { BindParams, Database } from 'sql.js';
import {
  InvalidInputError,
  RunnerError,
  type Logger,
  type Migration,
  type RetentionPolicy,
  type SqlParams,
  type Store,
  type StoreStats,
  type StoreTransaction,
  type WriteResult,
} from '@runner/plugin-sdk';
import { checkBackupOutput } from './backup-output.js';
import { DEFAULT_SNAPSHOT_JOURNAL_BYTES } from './config.js';
import { fsyncDir, readFileIfExists, removeIfExists, replaceFileAtomically } from './durable-fs.js';
import {
  DISK_FULL_CONDITION,
  isOutOfSpace,
  sqlError,
  storeClosedError,
  storeDiskFullError,
  storeFailedError,
} from './errors.js';
import { encodeEntry, encodeRecord, closeFd, JournalWriter, openFd, type JournalEntry } from './journal.js';
import { storeLayout, type StoreLayout } from './layout.js';
import { checkSnapshot, readMark, sha256, writeMark, type MarkedSnapshot } from './mark.js';
import { acquireLock, type DataDirLock } from './lock.js';
import { completeRestore } from './restore.js';
import { replayJournals } from './journal-replay.js';
import { checkMigrations, pendingMigrations } from './migrations.js';
import { RetentionRunner } from './retention.js';
import { INTERNAL_TABLES, SqlDatabase } from './sql-database.js';
import { DEFAULT_TRANSACTION_TIMEOUT_MS, OpenTransaction } from './sql-transaction.js';
import { configureConnection, hasSqliteHeader, loadSqlJs } from './sqljs.js';

const gzipAsync = promisify(gzip);

export interface StoreOptions {
  /** Journal size that triggers a snapshot (config `store.snapshot_journal_bytes`). */
  snapshotJournalBytes?: number;
  /** How long an interactive transaction may hold the store before it is rolled back. */
  transactionTimeoutMs?: number;
  /**
   * Told when the store works in a reduced way (a reason without paths, for the public health
   * answer) and when it recovered (null): the master's GET /api/v1/health reports it.
   */
  onCondition?: (reason: string | null) => void;
}

/** How often the mark follows the journal (see mark.ts): never on the commit path. */
const MARK_INTERVAL_MS = 1000;

export interface CloseOptions {
  /** Fold the journal into a snapshot before closing (default true). */
  snapshot?: boolean;
  /** Snapshot only when the journals hold more bytes than this (default 0: whenever behind). */
  snapshotAboveBytes?: number;
}

/** The store as its opener holds it: the Store service plus its lifecycle. */
export interface OpenedStore extends Store {
  /** `<dataDir>/store`. */
  readonly dir: string;
  /** Folds the journal into a new snapshot now. */
  snapshot(): Promise<void>;
  /**
   * Waits for pending writes, takes a snapshot (unless `snapshot: false`, or the journal holds no
   * more than `snapshotAboveBytes`: either leaves the journal for start-up to replay), closes the
   * database and releases the data-directory lock. Idempotent.
   */
  close(options?: CloseOptions): Promise<void>;
  /** Prunes the registered retention policies now, then every `intervalMs` (see retention.ts). */
  startRetention(intervalMs: number): void;
  /** One retention pass over every policy now; resolves when it ended. */
  pruneNow(): Promise<void>;
}

/**
 * Opens the store of a data directory: takes `<dataDir>/runner.lock`, loads the snapshot and
 * replays the journal. Fails with a ConflictError while another live process holds the lock.
 */
export async function openStore(dataDir: string, logger: Logger, options: StoreOptions = {}): Promise<OpenedStore> {
  const threshold = options.snapshotJournalBytes ?? DEFAULT_SNAPSHOT_JOURNAL_BYTES;
  if (!Number.isSafeInteger(threshold) || threshold <= 0) {
    throw new InvalidInputError(`store.snapshot_journal_bytes must be a positive integer, got ${threshold}`, {
      field: 'store.snapshot_journal_bytes',
    });
  }
  // sql.js (its WebAssembly: ~40 ms of CPU) loads while the lock and the directory are waited
  // for (fsyncs, tens of ms on a new data directory); open() awaits the same promise. A failure
  // to load is reported there.
  loadSqlJs().catch(() => {});
  const lock = await acquireLock(dataDir, logger);
  try {
    return await SqlStore.open(storeLayout(dataDir), lock, logger, threshold, {
      transactionTimeoutMs: options.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS,
      onCondition: options.onCondition ?? (() => undefined),
    });
  } catch (error) {
    await lock.release();
    throw error;
  }
}

function readError(error: unknown, sql: string): RunnerError {
  if (error instanceof Error && /readonly database/.test(error.message)) {
    return new InvalidInputError(`all() and get() only read; use run() or transaction() for "${sql.trim()}"`, {
      field: 'sql',
      cause: error,
    });
  }
  return sqlError(error, sql);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

class SqlStore implements OpenedStore {
  readonly dialect = 'sqlite' as const;
  private readonly sql: SqlDatabase;
  private writer!: JournalWriter;
  private state: 'open' | 'closing' | 'closed' = 'open';
  private seq = 0;
  /** Sequence number the snapshot on disk holds everything up to. */
  private snapshotSeq = 0;
  private snapshotBytes = 0;
  private lastSnapshotAt: string | null = null;
  /** Journal generations on disk, oldest first; the last is the one being written. */
  private generations: number[] = [];
  /** Bytes of the journals before the current one (still on disk until a snapshot completes). */
  private olderJournalBytes = 0;
  private snapshots: Promise<void> = Promise.resolve();
  private autoSnapshotRunning = false;
  private closing: Promise<void> | undefined;
  private readonly retention: RetentionRunner;
  /** The interactive transaction under way (withTransaction); other reads and writes wait for it. */
  private openTransaction: OpenTransaction | undefined;
  /** The snapshot on disk as the mark records it (null before the first). */
  private markedSnapshot: MarkedSnapshot | null = null;
  /** A snapshot being installed: every mark names it until the one after its rename. */
  private pendingSnapshot: MarkedSnapshot | undefined;
  /** The acknowledged sequence the last mark written holds. */
  private markedSeq = -1;
  private marks: Promise<void> = Promise.resolve();
  private markTimer: NodeJS.Timeout | undefined;
  private markFailed = false;

  private constructor(
    private readonly layout: StoreLayout,
    private readonly db: Database,
    private readonly lock: DataDirLock,
    private readonly logger: Logger,
    private readonly threshold: number,
    private readonly transactionTimeoutMs: number,
    private readonly onCondition: (reason: string | null) => void,
  ) {
    this.sql = new SqlDatabase(db);
    this.retention = new RetentionRunner(logger);
  }

  get dir(): string {
    return this.layout.dir;
  }

  static async open(
    layout: StoreLayout,
    lock: DataDirLock,
    logger: Logger,
    threshold: number,
    options: { transactionTimeoutMs: number; onCondition: (reason: string | null) => void },
  ): Promise<SqlStore> {
    // The database holds users, tokens' hashes and run records: this user's only (issue 9).
    await mkdir(layout.dir, { recursive: true, mode: 0o700 });
    // Leftovers of a crash mid-snapshot or mid-restore: never complete, never read.
    await removeIfExists(layout.snapshotTemp);
    await removeIfExists(layout.restoreTemp);
    await removeIfExists(layout.markTemp);
    if (await exists(layout.restore)) {
      logger.warn(`completing the restore of ${layout.restore} that was interrupted`, { path: layout.restore });
      await completeRestore(layout);
    }
    const started = performance.now();
    const SQL = await loadSqlJs();
    const image = await readFileIfExists(layout.snapshot);
    const mark = await readMark(layout);
    const snapshotSum = checkSnapshot(layout, image, mark);
    if (image !== null && !hasSqliteHeader(image)) {
      throw new RunnerError(
        'snapshot_invalid',
        `snapshot ${layout.snapshot} is not an SQLite database; restore a backup with runner db restore`,
        { details: { path: layout.snapshot } },
      );
    }
    const db = image === null ? new SQL.Database() : new SQL.Database(image);
    const store = new SqlStore(layout, db, lock, logger, threshold, options.transactionTimeoutMs, options.onCondition);
    try {
      configureConnection(db);
      store.sql.withWrites(() => db.exec(INTERNAL_TABLES));
      store.snapshotBytes = image?.length ?? 0;
      store.snapshotSeq = Number(store.readMeta('last_seq') ?? 0);
      store.lastSnapshotAt = store.readMeta('snapshot_at') ?? null;
      store.seq = store.snapshotSeq;
      const loaded = performance.now();
      const replayed = await replayJournals({
        layout,
        sql: store.sql,
        logger,
        snapshotSeq: store.seq,
        mark,
        onAppend: () => store.maybeSnapshot(),
        onSpace: (error) => store.spaceChanged(error),
      });
      store.writer = replayed.writer;
      store.seq = replayed.seq;
      store.generations = replayed.generations;
      store.olderJournalBytes = replayed.olderJournalBytes;
      if (image !== null && snapshotSum !== null) {
        store.markedSnapshot = { sha256: snapshotSum, seq: store.snapshotSeq, bytes: image.length };
      }
      await store.writeMarkNow();
      store.markTimer = setInterval(() => store.followJournal(), MARK_INTERVAL_MS);
      store.markTimer.unref();
      logger.info(`store ${layout.dir} opened`, {
        snapshot_bytes: store.snapshotBytes,
        replayed_records: store.seq - store.snapshotSeq,
        load_ms: Math.round(loaded - started),
        replay_ms: Math.round(performance.now() - loaded),
      });
    } catch (error) {
      store.sql.freeStatements();
      db.close();
      throw error;
    }
    return store;
  }

  // ---- reads

  async all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]> {
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    return this.readAll<T>(sql, params);
  }

  async get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined> {
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    return this.readOne<T>(sql, params);
  }

  /** Reads memory as it is now (inside an open transaction too: its own writes included). */
  private readAll<T>(sql: string, params?: SqlParams): T[] {
    this.assertReadable();
    const statement = this.sql.statement(sql);
    try {
      if (params !== undefined) statement.bind(params as BindParams);
      const rows: T[] = [];
      while (statement.step()) rows.push(statement.getAsObject() as T);
      return rows;
    } catch (error) {
      throw readError(error, sql);
    } finally {
      statement.reset();
    }
  }

  private readOne<T>(sql: string, params?: SqlParams): T | undefined {
    this.assertReadable();
    const statement = this.sql.statement(sql);
    try {
      if (params !== undefined) statement.bind(params as BindParams);
      return statement.step() ? (statement.getAsObject() as T) : undefined;
    } catch (error) {
      throw readError(error, sql);
    } finally {
      statement.reset();
    }
  }

  /**
   * Every wait for an open transaction is this loop, awaiting its `ended` directly: the waiters
   * resume in the order they came (a write issued before a read is applied before that read), and
   * each checks again, synchronously, whether another transaction opened meanwhile.
   */
  private async writeAfterTransaction(entry: JournalEntry): Promise<WriteResult[]> {
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    return this.write(entry);
  }

  // ---- writes

  run(sql: string, params?: SqlParams): Promise<WriteResult> {
    if (typeof sql !== 'string') {
      return Promise.reject(new InvalidInputError('run needs an SQL string', { field: 'sql' }));
    }
    return this.write({ mode: 'run', statements: [{ sql, params }] }).then((results) => results[0]);
  }

  transaction(statements: readonly { sql: string; params?: SqlParams }[]): Promise<WriteResult[]> {
    if (!Array.isArray(statements)) {
      return Promise.reject(new InvalidInputError('transaction needs an array of statements', { field: 'statements' }));
    }
    for (const [i, s] of statements.entries()) {
      if (typeof s?.sql !== 'string') {
        return Promise.reject(
          new InvalidInputError(`statements[${i}].sql must be a string`, { field: `statements[${i}].sql` }),
        );
      }
    }
    if (statements.length === 0) return Promise.resolve([]);
    return this.write({ mode: 'tx', statements: statements.map((s) => ({ sql: s.sql, params: s.params })) });
  }

  async migrate(owner: string, migrations: readonly Migration[]): Promise<void> {
    checkMigrations(owner, migrations);
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    const applied = this.readAll<{ id: number }>('SELECT id FROM _migrations WHERE owner = ?', [owner]).map(
      (r) => r.id,
    );
    const pending = pendingMigrations(owner, migrations, applied);
    // Applied one by one in memory without awaiting, so no other write interleaves; each is its
    // own transaction and journal record, so a failing one keeps those before it.
    let durable: Promise<unknown> = Promise.resolve();
    for (const m of pending) {
      try {
        durable = this.commit({
          mode: 'tx',
          statements: [
            { sql: m.sql, script: true },
            {
              sql: 'INSERT INTO _migrations (owner, id, description, applied_at) VALUES (?, ?, ?, ?)',
              params: [owner, m.id, m.description, new Date().toISOString()],
            },
          ],
        }).durable;
      } catch (error) {
        await durable;
        if (error instanceof RunnerError && error.code !== 'sql_error' && error.code !== 'conflict') throw error;
        throw new RunnerError(
          'migration_failed',
          `migration ${m.id} (${m.description}) of ${owner} failed: ${(error as Error).message}`,
          { cause: error, details: { owner, id: m.id } },
        );
      }
    }
    await durable;
  }

  private write(entry: JournalEntry): Promise<WriteResult[]> {
    // Behind an open interactive transaction, in the order issued: it must not see (or roll back)
    // what others write meanwhile.
    if (this.openTransaction !== undefined) return this.writeAfterTransaction(entry);
    try {
      const { results, durable } = this.commit(entry);
      return durable.then(() => results);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async withTransaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (typeof work !== 'function') throw new InvalidInputError('withTransaction needs a function', { field: 'work' });
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    this.assertWritable();
    const transaction = new OpenTransaction(
      this.sql,
      (sql, params) => this.readAll(sql, params),
      this.transactionTimeoutMs,
      () => this.release(transaction),
    );
    this.openTransaction = transaction;
    try {
      const value = await work(transaction.handle);
      this.assertWritable();
      const payload = transaction.commit();
      // The record's place in the journal is fixed here; the others may go on while it syncs.
      const durable = payload === undefined ? undefined : this.writer.append(encodeRecord(++this.seq, payload));
      this.release(transaction);
      await durable;
      return value;
    } finally {
      this.release(transaction);
    }
  }

  /** Ends `transaction` (rolled back unless committed) and lets the reads and writes waiting for it go. */
  private release(transaction: OpenTransaction): void {
    if (this.openTransaction === transaction) this.openTransaction = undefined;
    transaction.end();
  }

  /**
   * Executes in memory, then queues the journal record. Throws, having changed nothing, when the
   * SQL fails. Synchronous up to the queueing, which fixes the record's place in the journal.
   */
  private commit(entry: JournalEntry): { results: WriteResult[]; durable: Promise<void> } {
    this.assertWritable();
    // Encoded before executing: a parameter the journal cannot carry must not reach memory.
    const payload = encodeEntry(entry);
    const results = this.sql.withWrites(() => this.sql.apply(entry));
    this.seq += 1;
    return { results, durable: this.writer.append(encodeRecord(this.seq, payload)) };
  }

  private readMeta(key: string): string | undefined {
    return this.readOne<{ value: string }>('SELECT value FROM _store_meta WHERE key = ?', [key])?.value;
  }

  /** Not journalled: the values describe a snapshot and matter only inside its image. */
  private writeMeta(values: Record<string, string | number>): void {
    this.sql.withWrites(() => {
      for (const [key, value] of Object.entries(values)) {
        this.sql.execute({
          sql: 'INSERT INTO _store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
          params: [key, String(value)],
        });
      }
    });
  }

  private assertReadable(): void {
    if (this.state === 'closed') throw storeClosedError(this.layout.dir);
  }

  private assertWritable(): void {
    if (this.state !== 'open') throw storeClosedError(this.layout.dir);
    if (this.writer.failed) throw storeFailedError(this.writer.file.path, 'an earlier write failed');
    const full = this.writer.waitingForSpace;
    if (full !== null) throw storeDiskFullError(this.layout.dir, full);
  }

  /** The journal met a full file system (`error`), or the batch that met it landed (null). */
  private spaceChanged(error: unknown): void {
    if (error === null) {
      this.logger.info(
        `the journal ${this.writer.file.path} has space again: the waiting writes landed, writes resume`,
      );
    } else {
      this.logger.error(
        `${storeDiskFullError(this.layout.dir, error).message}. The writes already accepted wait in memory ` +
          `and are retried every second`,
        { path: this.writer.file.path },
      );
    }
    this.onCondition(error === null ? null : DISK_FULL_CONDITION);
  }

  // ---- the mark (see mark.ts)

  /** Writes the mark when the journal advanced since the last one (the 1 s timer). */
  private followJournal(): void {
    if (this.writer.durableSeq > this.markedSeq && this.state === 'open') this.writeMarkNow().catch(() => undefined);
  }

  /**
   * Queues a mark of the store as it is when its turn comes: the marked snapshot, the one being
   * installed, and the last record on disk. A failure is logged once (the next mark tries again);
   * it never fails a write, but fails a snapshot that needs its mark before the rename.
   */
  private writeMarkNow(): Promise<void> {
    const next = this.marks.then(async () => {
      const ackedSeq = this.writer.durableSeq;
      const pending = this.pendingSnapshot;
      try {
        await writeMark(this.layout, {
          version: 1,
          snapshot: this.markedSnapshot,
          ...(pending ? { pending } : {}),
          journal: { generation: this.writer.file.generation, ackedSeq },
          writtenAt: new Date().toISOString(),
        });
        this.markedSeq = ackedSeq;
        this.markFailed = false;
      } catch (error) {
        if (!this.markFailed) {
          const why = isOutOfSpace(error) ? 'the file system is full' : (error as Error).message;
          this.logger.warn(`could not write ${this.layout.mark} (${why}); start-up checks use the previous one`);
        }
        this.markFailed = true;
        if (pending) throw error;
      }
    });
    this.marks = next.catch(() => undefined);
    return next;
  }

  // ---- snapshots

  snapshot(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(storeClosedError(this.layout.dir));
    const next = this.snapshots.then(() => this.takeSnapshot());
    this.snapshots = next.catch(() => undefined);
    return next;
  }

  private maybeSnapshot(): void {
    if (this.autoSnapshotRunning || this.state !== 'open' || this.writer.file.size < this.threshold) return;
    this.autoSnapshotRunning = true;
    this.snapshot()
      .catch((error: Error) =>
        this.logger.error(`snapshot of ${this.layout.dir} failed; the journal keeps every write: ${error.message}`),
      )
      .finally(() => {
        this.autoSnapshotRunning = false;
      });
  }

  /**
   * Crash safety, step by step (see README): (1) create the next journal and sync the directory
   * so its name survives; (2) in one synchronous block, export the image and send later records
   * to the new journal, so the image holds exactly the records up to `seq`; (3) write the image
   * to a temp file, fsync, rename over snapshot.db, sync the directory; (4) only then delete the
   * older journals. Until (3) completes, start-up uses the old snapshot and replays every journal;
   * after it, records up to `seq` are skipped as already in the snapshot.
   */
  private async takeSnapshot(): Promise<void> {
    const started = performance.now();
    const generation = this.writer.file.generation + 1;
    const path = this.layout.journal(generation);
    const fd = await openFd(path, 'wx');
    try {
      await fsyncDir(this.layout.dir);
    } catch (error) {
      await closeFd(fd);
      await removeIfExists(path);
      throw error;
    }
    // An open interactive transaction must not be in the image (nor lose its BEGIN to export).
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    // The only part that blocks the event loop: export is synchronous in sql.js (about 2.5 ms per
    // MB here). Everything after it overlaps with writes, which go to the new journal.
    const seq = this.seq;
    const at = new Date().toISOString();
    this.writeMeta({ last_seq: seq, snapshot_at: at });
    const exportStarted = performance.now();
    const image = this.db.export();
    const exportMs = performance.now() - exportStarted;
    const marked: MarkedSnapshot = { sha256: sha256(image), seq, bytes: image.length };
    this.olderJournalBytes += this.writer.file.size;
    const older = this.generations.slice();
    this.generations.push(generation);
    const switched = this.writer.switchTo({ fd, path, generation, size: 0 });
    switched.catch(() => undefined);

    // The marks name the new image before it replaces the old one, until one names it as the
    // snapshot: a crash in between leaves an image start-up recognises as pending, not as damage.
    // After a failure the image stays named as pending: the rename may have happened.
    this.pendingSnapshot = marked;
    await this.writeMarkNow();
    await replaceFileAtomically(this.layout.snapshot, image, this.layout.snapshotTemp);
    this.markedSnapshot = marked;
    this.pendingSnapshot = undefined;
    await this.writeMarkNow();
    this.snapshotSeq = seq;
    this.snapshotBytes = image.length;
    this.lastSnapshotAt = at;
    await switched;
    for (const old of older) await removeIfExists(this.layout.journal(old));
    await fsyncDir(this.layout.dir);
    this.generations = this.generations.filter((g) => !older.includes(g));
    this.olderJournalBytes = 0;
    this.logger.info(`snapshot ${this.layout.snapshot} written (${image.length} bytes, up to record ${seq})`, {
      bytes: image.length,
      seq,
      export_ms: Math.round(exportMs),
      total_ms: Math.round(performance.now() - started),
    });
  }

  // ---- maintenance

  async backupImage(options: { compress?: boolean } = {}): Promise<Uint8Array> {
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    this.assertReadable();
    this.writeMeta({ last_seq: this.seq });
    const image = this.db.export();
    // The image may hold writes whose fsync is still in flight; a backup completes only once
    // everything in it is durable here too.
    await this.writer.drain();
    return options.compress ? await gzipAsync(image) : image;
  }

  async backup(outputPath: string, options: { compress?: boolean } = {}): Promise<{ path: string; bytes: number }> {
    const output = await checkBackupOutput(outputPath, this.layout.dir);
    const data = await this.backupImage(options);
    await replaceFileAtomically(output, data);
    this.logger.info(`backup written to ${output} (${data.length} bytes${options.compress ? ', gzip' : ''})`);
    return { path: output, bytes: data.length };
  }

  async vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    const bytesBefore = this.databaseBytes();
    // Journalled like any write, so a replay reproduces the same pages (and rowids) for the
    // records that follow; the snapshot after it makes that replay unnecessary.
    await this.run('VACUUM');
    await this.snapshot();
    return { bytesBefore, bytesAfter: this.databaseBytes() };
  }

  private databaseBytes(): number {
    const pages = this.readOne<{ page_count: number }>('PRAGMA page_count')?.page_count ?? 0;
    const size = this.readOne<{ page_size: number }>('PRAGMA page_size')?.page_size ?? 0;
    return pages * size;
  }

  async stats(): Promise<StoreStats> {
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    this.assertReadable();
    const names = this.readAll<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    );
    const stats: StoreStats = {
      path: this.layout.dir,
      snapshotBytes: this.snapshotBytes,
      journalBytes: this.olderJournalBytes + this.writer.file.size,
      journalRecords: this.seq - this.snapshotSeq,
      tables: names.map(({ name }) => ({
        name,
        rows: this.readOne<{ n: number }>(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`)?.n ?? 0,
      })),
      pageCount: this.readOne<{ page_count: number }>('PRAGMA page_count')?.page_count ?? 0,
      pageSize: this.readOne<{ page_size: number }>('PRAGMA page_size')?.page_size ?? 0,
      lastSnapshotAt: this.lastSnapshotAt,
      retention: [],
    };
    return { ...stats, retention: await this.retention.stats() };
  }

  retain(policy: RetentionPolicy): () => void {
    return this.retention.register(policy);
  }

  startRetention(intervalMs: number): void {
    this.retention.start(intervalMs);
  }

  pruneNow(): Promise<void> {
    return this.retention.runPass();
  }

  // ---- lifecycle

  close(options: CloseOptions = {}): Promise<void> {
    this.closing ??= this.shutdown(options.snapshot ?? true, options.snapshotAboveBytes ?? 0);
    return this.closing;
  }

  private async shutdown(snapshot: boolean, snapshotAboveBytes: number): Promise<void> {
    // Records waiting for space were never acknowledged: one last try, then they fail (and so
    // does whatever awaits them, a retention pass included).
    this.writer.stopWaitingForSpace();
    // A pass under way ends after its batch; its writes are then drained like any other.
    await this.retention.stop();
    while (this.openTransaction !== undefined) await this.openTransaction.ended;
    this.state = 'closing';
    clearInterval(this.markTimer);
    try {
      await this.snapshots;
      await this.writer.drain();
      const behind = this.seq > this.snapshotSeq || this.generations.length > 1;
      const journalBytes = this.olderJournalBytes + this.writer.file.size;
      if (snapshot && behind && journalBytes > snapshotAboveBytes && !this.writer.failed) await this.takeSnapshot();
      else if (this.writer.durableSeq > this.markedSeq) await this.writeMarkNow();
    } catch (error) {
      this.logger.error(
        `final snapshot of ${this.layout.dir} failed; start-up will replay the journal: ${(error as Error).message}`,
      );
    } finally {
      await this.writer.close().catch(() => undefined);
      this.sql.freeStatements();
      this.db.close();
      this.state = 'closed';
      await this.lock.release();
    }
  }
}
