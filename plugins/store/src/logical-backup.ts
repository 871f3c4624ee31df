import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger, Store, StoreSchema } from '@runner/plugin-sdk';
import { copyStore, type TableReport } from './db-copy.js';
import { restoreDatabase } from './restore.js';
import { openStore, type OpenedStore } from './sql-store.js';

/**
 * The logical backup of a store on PostgreSQL: its rows copied into an embedded database, whose
 * image is the backup. A backup is therefore one format whichever backend took it, and restores on
 * either (an embedded image restored onto PostgreSQL is copied back the same way).
 */

/** A copy holds the temporary store for as long as it takes, not the 10 s of a request's claim. */
const COPY_TRANSACTION_MS = 24 * 60 * 60 * 1000;

/** Opens an embedded store in a temp directory for `work`, then removes it whatever happens. */
async function withTempStore<T>(
  logger: Logger,
  prepare: (dir: string) => Promise<void>,
  work: (store: OpenedStore) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'runner-copy-'));
  try {
    await prepare(dir);
    const store = await openStore(dir, logger, { transactionTimeoutMs: COPY_TRANSACTION_MS });
    try {
      return await work(store);
    } finally {
      await store.close({ snapshot: false });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `source`'s rows as an embedded database image (gzip when `compress`). */
export async function embeddedImage(
  source: Store,
  schemas: readonly StoreSchema[],
  logger: Logger,
  options: { compress?: boolean } = {},
): Promise<Uint8Array> {
  return withTempStore(
    logger,
    async () => undefined,
    async (image) => {
      await copyStore(source, image, schemas);
      return image.backupImage(options);
    },
  );
}

/** Replaces everything in `target` with the backup file's rows (an embedded image, maybe gzip). */
export async function restoreInto(
  target: Store,
  backupPath: string,
  options: { decompress?: boolean },
  schemas: readonly StoreSchema[],
  logger: Logger,
): Promise<TableReport[]> {
  return withTempStore(
    logger,
    // The same checks as a restore into a data directory: the header, gzip, SQLite's integrity.
    async (dir) => {
      await restoreDatabase(dir, backupPath, options, logger);
    },
    (image) => copyStore(image, target, schemas, { overwrite: true }),
  );
}
