import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { RunnerError } from '@runner/plugin-sdk';
import { replaceFileAtomically } from './durable-fs.js';
import type { StoreLayout } from './layout.js';

/** A snapshot as the mark knows it. */
export interface MarkedSnapshot {
  sha256: string;
  /** The last record the snapshot holds. */
  seq: number;
  bytes: number;
}

/**
 * `store/mark.json`: what start-up checks the files against, so that damage beyond a torn last
 * record stops it instead of silently losing acknowledged writes. Written off the commit path (at
 * most once a second when the journal advanced, and at each snapshot), so the writes acknowledged
 * in the last second before a crash are not covered by the journal check.
 */
export interface StoreMark {
  version: 1;
  /** The snapshot on disk; null before the first one. */
  snapshot: MarkedSnapshot | null;
  /** A snapshot being installed: a crash between its rename and the next mark leaves it in place. */
  pending?: MarkedSnapshot;
  journal: {
    /** The generation being written when the mark was. */
    generation: number;
    /** The last record known to be on disk (acknowledged) then. */
    ackedSeq: number;
  };
  writtenAt: string;
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function markDamagedError(path: string, reason: string): RunnerError {
  return new RunnerError(
    'store_damaged',
    `${path} is unreadable (${reason}), so the store's files cannot be checked; refusing to start. ` +
      `runner db repair checks what is intact and writes a new one`,
    { details: { path, reason } },
  );
}

/** The mark, or null when there is none (a new data directory, or one from before marks). */
export async function readMark(layout: StoreLayout): Promise<StoreMark | null> {
  let text: string;
  try {
    text = await readFile(layout.mark, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const mark = JSON.parse(text) as StoreMark;
    if (mark.version !== 1 || typeof mark.journal?.ackedSeq !== 'number') throw new Error('not a version 1 mark');
    return mark;
  } catch (error) {
    throw markDamagedError(layout.mark, (error as Error).message);
  }
}

/** Replaces the mark (temp file, fsync, rename, directory fsync). */
export async function writeMark(layout: StoreLayout, mark: StoreMark): Promise<void> {
  await replaceFileAtomically(layout.mark, Buffer.from(`${JSON.stringify(mark, null, 2)}\n`), layout.markTemp);
}

/**
 * Checks the snapshot's bytes against the mark; answers the snapshot as marked (its checksum, and
 * the sequence its image holds, read later) or throws `store_damaged` naming the file. Without a
 * mark everything is accepted: nothing says what the files should hold.
 */
export function checkSnapshot(layout: StoreLayout, image: Uint8Array | null, mark: StoreMark | null): string | null {
  if (image === null) {
    if (mark?.snapshot) {
      throw damagedError(
        layout.snapshot,
        `it is missing, but ${layout.mark} says it held every record up to ${mark.snapshot.seq}`,
      );
    }
    return null;
  }
  const sum = sha256(image);
  if (mark === null || mark.snapshot === null) return sum;
  if (sum === mark.snapshot.sha256 || sum === mark.pending?.sha256) return sum;
  throw damagedError(
    layout.snapshot,
    `its SHA-256 ${sum.slice(0, 16)}... (${image.length} bytes) matches neither the snapshot ${layout.mark} ` +
      `recorded (${mark.snapshot.sha256.slice(0, 16)}..., ${mark.snapshot.bytes} bytes, records up to ` +
      `${mark.snapshot.seq})${mark.pending ? ' nor the one being installed' : ''}: its contents changed after it was written`,
  );
}

/**
 * Throws `store_damaged` when the journals end (at `lastSeq`) before the last record the mark saw
 * acknowledged: records were cut off or a journal file is missing. `lastGeneration` is the last
 * journal file found (undefined: none).
 */
export function checkContinuity(
  layout: StoreLayout,
  mark: StoreMark | null,
  lastSeq: number,
  lastGeneration: number | undefined,
): void {
  if (mark === null || lastSeq >= mark.journal.ackedSeq) return;
  const expected = layout.journal(mark.journal.generation);
  const [file, where] =
    lastGeneration === undefined
      ? [expected, `it is missing and no journal file is left`]
      : lastGeneration < mark.journal.generation
        ? [expected, `it is missing (the last journal is ${layout.journal(lastGeneration)})`]
        : [layout.journal(lastGeneration), `it ends at record ${lastSeq}`];
  throw damagedError(
    file,
    `${where}, but ${layout.mark} saw records up to ${mark.journal.ackedSeq} acknowledged: records ` +
      `${lastSeq + 1}..${mark.journal.ackedSeq} are lost`,
    { lostFrom: lastSeq + 1, lostTo: mark.journal.ackedSeq },
  );
}

function damagedError(path: string, reason: string, extra: Record<string, unknown> = {}): RunnerError {
  return new RunnerError(
    'store_damaged',
    `store file ${path}: ${reason}. Refusing to start. ` +
      `runner db repair keeps what is intact and reports what it drops; runner db restore installs a backup`,
    { details: { path, reason, ...extra } },
  );
}
