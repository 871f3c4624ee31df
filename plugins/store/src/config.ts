import type { ConfigDeclaration, RunnerConfig } from '@runner/plugin-sdk';

export const SNAPSHOT_JOURNAL_BYTES_KEY = 'store.snapshot_journal_bytes';
// Replay costs 20-45 µs a record: 16 MiB of journal keeps a restart within a few seconds.
export const DEFAULT_SNAPSHOT_JOURNAL_BYTES = 16 * 1024 * 1024;

/** Keys of the store, checked by the kernel before setup. */
export const STORE_CONFIG: ConfigDeclaration = {
  [SNAPSHOT_JOURNAL_BYTES_KEY]: {
    schema: { type: 'integer', minimum: 1 },
    default: DEFAULT_SNAPSHOT_JOURNAL_BYTES,
    help: 'journal size (bytes) that triggers a snapshot of the database',
  },
};

/** `store.snapshot_journal_bytes`: journal size that triggers a snapshot. */
export function snapshotJournalBytes(config: RunnerConfig): number {
  return config.get<number>(SNAPSHOT_JOURNAL_BYTES_KEY);
}
