import { readFile, open } from 'node:fs/promises';
import { RunnerError, type Logger } from '@runner/plugin-sdk';
import { fsyncDir } from './durable-fs.js';
import { journalCorruptError, storeFailedError } from './errors.js';
import { JournalWriter, openFd, scanJournal, type JournalFile } from './journal.js';
import { listJournals, type StoreLayout } from './layout.js';
import { checkContinuity, type StoreMark } from './mark.js';
import type { SqlDatabase } from './sql-database.js';

/** Where the store stands after replay: the writer on the last journal and what is on disk. */
export interface Replayed {
  writer: JournalWriter;
  /** The last sequence number applied. */
  seq: number;
  /** Journal generations on disk, oldest first; the last is the one the writer appends to. */
  generations: number[];
  /** Bytes of the journals before the current one. */
  olderJournalBytes: number;
}

/**
 * Applies the journals' records past the snapshot (which ends at `snapshotSeq`) to `sql`, checks
 * their sequence, truncates a torn last record, and returns a writer on the last journal (a new
 * one when there is none). `onAppend` runs after each append (the store's snapshot trigger).
 */
export async function replayJournals(options: {
  layout: StoreLayout;
  sql: SqlDatabase;
  logger: Logger;
  snapshotSeq: number;
  /** What the journals must reach (checked before any file is changed); null: nothing to check. */
  mark: StoreMark | null;
  onAppend: () => void;
  /** The writer's `onSpace` (see JournalWriter). */
  onSpace?: (error: unknown) => void;
}): Promise<Replayed> {
  const { layout, sql, logger, onAppend } = options;
  let seq = options.snapshotSeq;
  const generations: number[] = [];
  let olderJournalBytes = 0;
  const journals = await listJournals(layout);
  let previousSeq = 0;
  let torn: { path: string; offset: number; validBytes: number; reason: string } | undefined;
  let last: { path: string; generation: number; size: number } | undefined;
  for (const journal of journals) {
    const data = await readFile(journal.path);
    if (torn !== undefined && data.length > 0) {
      // A torn record is only acceptable as the very last write; a later journal has data.
      throw journalCorruptError(torn.path, torn.offset, `incomplete record, but ${journal.path} follows it`);
    }
    // One query_only switch for the whole file rather than two per record.
    const scan = sql.withWrites(() =>
      scanJournal(journal.path, data, previousSeq, (record) => {
        if (previousSeq !== 0 && record.seq !== previousSeq + 1) {
          throw journalCorruptError(journal.path, record.offset, `sequence ${record.seq} follows ${previousSeq}`);
        }
        previousSeq = record.seq;
        if (record.seq <= seq) return; // already in the snapshot
        if (record.seq !== seq + 1) {
          throw journalCorruptError(
            journal.path,
            record.offset,
            `sequence ${record.seq}, but the snapshot ends at ${seq}: records are missing`,
          );
        }
        try {
          sql.apply(record.entry);
        } catch (error) {
          throw new RunnerError(
            'journal_replay_failed',
            `replaying record ${record.seq} of journal ${journal.path} (offset ${record.offset}) failed: ` +
              `${(error as Error).message}`,
            { cause: error, details: { path: journal.path, offset: record.offset, seq: record.seq } },
          );
        }
        seq = record.seq;
      }),
    );
    if (scan.torn !== null) {
      torn = { path: journal.path, offset: scan.torn.offset, validBytes: scan.validBytes, reason: scan.torn.reason };
    }
    generations.push(journal.generation);
    if (last !== undefined) olderJournalBytes += last.size;
    last = { path: journal.path, generation: journal.generation, size: scan.validBytes };
  }
  // A torn record past what the mark saw acknowledged was never acknowledged; before it, records
  // were lost. Checked before the torn record is cut off, so a refused start changes no file.
  checkContinuity(layout, options.mark, seq, last?.generation);
  if (torn !== undefined) await cutTornRecord(torn, logger);
  let file: JournalFile;
  if (last === undefined) {
    const path = layout.journal(1);
    const fd = await openFd(path, 'wx');
    // The new name must survive a crash before any acknowledged record depends on it.
    await fsyncDir(layout.dir);
    generations.push(1);
    file = { fd, path, generation: 1, size: 0 };
  } else {
    file = { ...last, fd: await openFd(last.path, 'r+') };
  }
  const writer = new JournalWriter(
    file,
    (error, path) => {
      const failure = storeFailedError(path, error);
      logger.error(failure.message, { path });
      return failure;
    },
    onAppend,
    options.onSpace,
  );
  writer.durableSeq = seq;
  return { writer, seq, generations, olderJournalBytes };
}

async function cutTornRecord(
  torn: { path: string; offset: number; validBytes: number; reason: string },
  logger: Logger,
): Promise<void> {
  logger.warn(
    `journal ${torn.path}: dropped an incomplete last record at offset ${torn.offset} ` +
      `(${torn.reason}); truncated the file to ${torn.validBytes} bytes`,
    { path: torn.path, offset: torn.offset, reason: torn.reason },
  );
  const handle = await open(torn.path, 'r+');
  try {
    await handle.truncate(torn.validBytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
