import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The files of a store, all in `<dataDir>/store/` so renames stay within one directory. */
export interface StoreLayout {
  dir: string;
  snapshot: string;
  /** The snapshot being written; never read, removed at start-up. */
  snapshotTemp: string;
  /** A restored database whose installation is under way (see restore.ts). */
  restore: string;
  restoreTemp: string;
  /** What start-up checks the snapshot and journals against (see mark.ts). */
  mark: string;
  markTemp: string;
  journal(generation: number): string;
}

const JOURNAL_NAME = /^journal-(\d{8,})\.log$/;

export function storeLayout(dataDir: string): StoreLayout {
  const dir = join(dataDir, 'store');
  return {
    dir,
    snapshot: join(dir, 'snapshot.db'),
    snapshotTemp: join(dir, 'snapshot.db.tmp'),
    restore: join(dir, 'restore.db'),
    restoreTemp: join(dir, 'restore.db.tmp'),
    mark: join(dir, 'mark.json'),
    markTemp: join(dir, 'mark.json.tmp'),
    journal: (generation) => join(dir, `journal-${String(generation).padStart(8, '0')}.log`),
  };
}

/** Journal files in generation order, which is the order their records were written in. */
export async function listJournals(layout: StoreLayout): Promise<{ generation: number; path: string }[]> {
  let names: string[];
  try {
    names = await readdir(layout.dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .map((name) => JOURNAL_NAME.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ generation: Number(m[1]), path: join(layout.dir, m[0]) }))
    .sort((a, b) => a.generation - b.generation);
}
