import { resolve } from 'node:path';
import {
  callRoute,
  formatBytes,
  InvalidInputError,
  type ActionInput,
  type CommandContext,
  type CommandInput,
  type MasterClient,
  type Store,
  type StoreSchema,
  type StoreStats,
} from '@runner/plugin-sdk';
import { getDbStats, postDbVacuum } from './api.js';
import { checkBackupOutput } from './backup-output.js';
import { postgresSettings, snapshotJournalBytes } from './config.js';
import { replaceFileAtomically } from './durable-fs.js';
import { storeLayout } from './layout.js';
import { readLockHolder } from './lock.js';
import { lockHolderMaster, STORE_CALL_TIMEOUT_MS } from './lock-holder-master.js';
import { copyStore, type TableReport } from './db-copy.js';
import { formatRepairReport, repairStore, type RepairReport } from './db-repair.js';
export { formatRepairReport };
import { embeddedImage, restoreInto } from './logical-backup.js';

import { redactUrl, type PostgresStore } from './pg-store.js';
import { restoreDatabase } from './restore.js';
import { openStore } from './sql-store.js';

/**
 * Through the master's REST API when a live process holds the data directory, else directly; on
 * PostgreSQL (`store.url`) always directly, since the database serves any number of clients.
 */
async function viaMasterOrDirect<T>(
  ctx: CommandContext,
  viaMaster: (master: MasterClient) => Promise<T>,
  direct: (store: Store) => Promise<T>,
): Promise<T> {
  const postgres = postgresSettings(ctx.config);
  if (postgres !== undefined) return withPostgres(ctx, postgres.url, direct);
  const dataDir = ctx.config.dataDir;
  const holder = await readLockHolder(dataDir);
  if (holder?.alive) return viaMaster(await lockHolderMaster(dataDir, holder));
  // If a master starts in between, openStore fails with the lock conflict naming it.
  const store = await openStore(dataDir, ctx.logger, { snapshotJournalBytes: snapshotJournalBytes(ctx.config) });
  try {
    return await direct(store);
  } finally {
    await store.close();
  }
}

/** The PostgreSQL store at `url`, migrated by nobody: for reading and maintenance only. */
async function withPostgres<T>(
  ctx: CommandContext,
  url: string,
  work: (store: PostgresStore) => Promise<T>,
): Promise<T> {
  const { PostgresStore } = await import('./pg-store.js');
  const store = await PostgresStore.open({ url }, ctx.logger);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Every plugin's declared schema (the CLI's context has them; a command run without it has none). */
async function declaredSchemas(ctx: CommandContext): Promise<StoreSchema[]> {
  return (await ctx.schemas?.()) ?? [];
}

export async function backupCommand(input: CommandInput, ctx: CommandContext): Promise<number> {
  const output = input.options.output;
  if (typeof output !== 'string' || output === '') {
    throw new InvalidInputError('runner db backup needs --output <path>', { field: 'output' });
  }
  const compress = input.options.compress === true;
  const result = await viaMasterOrDirect(
    ctx,
    async (master) => {
      // The master sends the image; this process writes the file, with its own user's rights.
      const path = await checkBackupOutput(output, storeLayout(ctx.config.dataDir).dir);
      const image = await master.bytes(`/db/backup?compress=${compress}`, { timeoutMs: STORE_CALL_TIMEOUT_MS });
      await replaceFileAtomically(path, image);
      return { path, bytes: image.length };
    },
    async (store) => {
      if (store.dialect !== 'postgres') return store.backup(output, { compress });
      const path = resolve(output);
      const image = await embeddedImage(store, await declaredSchemas(ctx), ctx.logger, { compress });
      await replaceFileAtomically(path, image);
      return { path, bytes: image.length };
    },
  );
  ctx.stdout.write(`backup written to ${result.path} (${formatBytes(result.bytes)}${compress ? ', gzip' : ''})\n`);
  return 0;
}

/** What `runner db restore` did: the backup and where it went. */
export interface RestoreAnswer {
  from: string;
  into: string;
  bytes?: number;
  tables?: number;
  rows?: number;
}

export async function restoreDb(input: ActionInput, ctx: CommandContext): Promise<RestoreAnswer> {
  const { path } = input.args;
  if (path === undefined || path === '')
    throw new InvalidInputError('runner db restore needs a backup file', { field: 'path' });
  const postgres = postgresSettings(ctx.config);
  if (postgres !== undefined) {
    // Every master on the database must be stopped: the restore replaces all of its rows.
    const tables = await withPostgres(ctx, postgres.url, async (store) =>
      restoreInto(
        store,
        path,
        { decompress: input.options.decompress === true },
        await declaredSchemas(ctx),
        ctx.logger,
      ),
    );
    const rows = tables.reduce((sum, t) => sum + t.rows, 0);
    return { from: resolve(path), into: redactUrl(postgres.url), tables: tables.length, rows };
  }
  const result = await restoreDatabase(
    ctx.config.dataDir,
    path,
    { decompress: input.options.decompress === true },
    ctx.logger,
  );
  return { from: resolve(path), into: result.path, bytes: result.bytes };
}

/** One line for people. */
export function restoreText(answer: RestoreAnswer): string {
  return answer.tables === undefined
    ? `restored ${answer.from} as ${answer.into} (${formatBytes(answer.bytes ?? 0)})\n`
    : `restored ${answer.from} into ${answer.into} (${answer.tables} tables, ${answer.rows} rows)\n`;
}

/** `runner db repair`: the embedded store's files only (a master holding them refuses it). */
export async function repairDb(input: ActionInput, ctx: CommandContext): Promise<RepairReport> {
  if (postgresSettings(ctx.config) !== undefined) {
    throw new InvalidInputError(
      'runner db repair rebuilds the embedded store from its files; with store.url set, the store is PostgreSQL, which recovers by itself',
      { field: 'store.url' },
    );
  }
  return repairStore(ctx.config.dataDir, ctx.logger, { dryRun: input.options.dryRun === true });
}

export function vacuumDb(ctx: CommandContext): Promise<{ bytesBefore: number; bytesAfter: number }> {
  return viaMasterOrDirect(
    ctx,
    (master) => callRoute(master, postDbVacuum, { timeoutMs: STORE_CALL_TIMEOUT_MS }),
    (store) => store.vacuum(),
  );
}

/**
 * `runner db stats` as text. `configured` are the retention settings of the loaded plugins (keys
 * with a `retention` part), shown when no process runs the policies to report on them.
 */
export function formatStats(
  stats: StoreStats,
  configured: readonly { key: string; value: unknown }[] = [],
  offline = false,
): string {
  const width = Math.max(5, ...stats.tables.map((t) => t.name.length));
  const lines = [
    `store     ${stats.path}`,
    `snapshot  ${formatBytes(stats.snapshotBytes)}, taken ${stats.lastSnapshotAt ?? 'never'}`,
    `journal   ${formatBytes(stats.journalBytes)}, ${stats.journalRecords} records since the snapshot`,
    `database  ${stats.pageCount} pages of ${stats.pageSize} B (${formatBytes(stats.pageCount * stats.pageSize)})`,
    '',
    `${'table'.padEnd(width)}  rows`,
    ...stats.tables.map((t) => `${t.name.padEnd(width)}  ${t.rows}`),
    '',
    ...retentionLines(stats, configured, offline),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * What each retention policy keeps and would remove now. From a master, which runs them, with its
 * last pass; without one (`offline`), from the same policies built over the store by their plugins.
 */
function retentionLines(
  stats: StoreStats,
  configured: readonly { key: string; value: unknown }[],
  offline: boolean,
): string[] {
  const policies = stats.retention ?? [];
  if (policies.length === 0) {
    return [
      'retention  applies while a master (or a run) has this data directory open; configured:',
      ...configured.map(({ key, value }) => `  ${key} = ${String(value)}`),
    ];
  }
  return [
    offline ? 'retention  (no master has this data directory open: nothing is pruned until one does)' : 'retention',
    ...policies.flatMap((p) => [
      `  ${p.name}: keeps ${p.rule}`,
      `    kept now ${p.kept}${p.oldest ? `, oldest ${p.oldest}` : ''}${
        p.due === undefined ? '' : `; ${dueText(p.due, offline)}`
      }${
        offline
          ? ''
          : `; last pass ${p.lastPrunedAt === null ? 'not yet' : `${p.lastPrunedAt}, removed ${p.lastRemoved}`}`
      }${p.lastError ? `; failed: ${p.lastError}` : ''}`,
    ]),
  ];
}

/** What a policy's `due` figure means for the data directory's next pass. */
function dueText(due: number, offline: boolean): string {
  if (due === 0) return 'none past the rule';
  return `${due} past the rule: ${offline ? "a master's first pass" : 'the next pass'} removes them`;
}

/** Marks stats read by this process, with no master running the policies (not in JSON output). */
const READ_OFFLINE = Symbol('read offline');

export async function readDbStats(ctx: CommandContext): Promise<StoreStats> {
  let offline = false;
  const stats = await viaMasterOrDirect(
    ctx,
    (master) => callRoute(master, getDbStats, { timeoutMs: STORE_CALL_TIMEOUT_MS }),
    async (store) => {
      // The policies a master would run, built by their plugins over this store: registered to be
      // reported, never started (the store prunes only once startRetention is called).
      offline = true;
      for (const policy of (await ctx.retentionPolicies?.(store)) ?? []) store.retain(policy);
      return store.stats();
    },
  );
  return Object.assign(stats, { [READ_OFFLINE]: offline });
}

/** `runner db stats` for people, with the retention settings when no master runs the policies. */
export function statsText(stats: StoreStats, ctx: CommandContext): string {
  const configured = ctx.config.declared().filter((k) => /(^|\.)retention(\.|_|$)/.test(k.key));
  return formatStats(stats, configured, (stats as { [READ_OFFLINE]?: boolean })[READ_OFFLINE] === true);
}

/** A store named on the command line: a PostgreSQL URL, or else a data directory. */
function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** Opens the store at `location` for `work` and closes it after. */
async function withStoreAt<T>(ctx: CommandContext, location: string, work: (store: Store) => Promise<T>): Promise<T> {
  if (isPostgresUrl(location)) return withPostgres(ctx, location, work);
  // A copy holds its transaction as long as it takes (the 10 s default is for a master's claims).
  const store = await openStore(resolve(location), ctx.logger, { transactionTimeoutMs: 24 * 60 * 60 * 1000 });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** What `runner db copy` prints per table. */
export function formatCopyReport(from: string, to: string, tables: readonly TableReport[]): string {
  const width = Math.max(5, ...tables.map((t) => t.table.length));
  const rows = tables.reduce((sum, t) => sum + t.rows, 0);
  return [
    `copied ${from} -> ${to}: ${tables.length} tables, ${rows} rows, each verified (rows and checksum equal on both)`,
    `${'table'.padEnd(width)}  ${'rows'.padStart(9)}  checksum`,
    ...tables.map((t) => `${t.table.padEnd(width)}  ${String(t.rows).padStart(9)}  ${t.checksum}`),
    '',
  ].join('\n');
}

export async function copyDb(
  input: ActionInput,
  ctx: CommandContext,
): Promise<{ from: string; to: string; tables: TableReport[] }> {
  const { from, to } = input.options;
  for (const [field, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (typeof value !== 'string' || value === '') {
      throw new InvalidInputError(`runner db copy needs --${field} <data-dir | postgres://...>`, { field });
    }
  }
  const [source, target] = [from as string, to as string];
  if (resolve(source) === resolve(target) || source === target) {
    throw new InvalidInputError('--from and --to name the same store', { field: 'to' });
  }
  const schemas = await declaredSchemas(ctx);
  const tables = await withStoreAt(ctx, source, (sourceStore) =>
    withStoreAt(ctx, target, (targetStore) =>
      copyStore(sourceStore, targetStore, schemas, { overwrite: input.options.overwrite === true }),
    ),
  );
  const shown = (location: string) => (isPostgresUrl(location) ? redactUrl(location) : resolve(location));
  return { from: shown(source), to: shown(target), tables: [...tables] };
}
