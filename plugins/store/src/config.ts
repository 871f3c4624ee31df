import { InvalidInputError, type RunnerConfig } from '@runner/plugin-sdk';

export const SNAPSHOT_JOURNAL_BYTES_KEY = 'store.snapshot_journal_bytes';
// Replay costs 20-45 µs a record: 16 MiB of journal keeps a restart within a few seconds.
export const DEFAULT_SNAPSHOT_JOURNAL_BYTES = 16 * 1024 * 1024;

/** `store.snapshot_journal_bytes`: journal size that triggers a snapshot. */
export function snapshotJournalBytes(config: RunnerConfig): number {
  const value = config.get(SNAPSHOT_JOURNAL_BYTES_KEY, DEFAULT_SNAPSHOT_JOURNAL_BYTES);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidInputError(
      `${SNAPSHOT_JOURNAL_BYTES_KEY} (from ${config.sourceOf(SNAPSHOT_JOURNAL_BYTES_KEY)}) must be a positive ` +
        `integer of bytes, got ${value}`,
      { field: SNAPSHOT_JOURNAL_BYTES_KEY },
    );
  }
  return value;
}
