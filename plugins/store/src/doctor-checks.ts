import { hasTable, type CommandContext, type DoctorCheck, type StoreSchema } from '@runner/plugin-sdk';
import { postgresSettings } from './config.js';
import { redactUrl, type PostgresStore } from './pg-store.js';

/** The oldest PostgreSQL the store's SQL is written for (identity columns, ON CONFLICT, regnamespace). */
const MIN_POSTGRES_MAJOR = 12;
/** Doctor waits this long for a connection, not the master's 10 s. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * `runner doctor`'s checks of the store: with `store.url` set, that PostgreSQL answers, its
 * version, and where the schema stands against this build's migrations; nothing on the embedded
 * store (the data directory check covers it). Never throws, never writes.
 */
export async function storeDoctorChecks(ctx: CommandContext): Promise<DoctorCheck[]> {
  let settings: ReturnType<typeof postgresSettings>;
  try {
    settings = postgresSettings(ctx.config);
  } catch {
    return []; // the config check already reports an invalid store.url
  }
  if (settings === undefined) return [];
  const where = redactUrl(settings.url);
  const { PostgresStore } = await import('./pg-store.js');
  let store: PostgresStore;
  try {
    store = await PostgresStore.open(
      { url: settings.url, poolSize: 1, connectTimeoutMs: CONNECT_TIMEOUT_MS, readOnly: true },
      ctx.logger,
    );
  } catch (error) {
    return [
      {
        name: 'store',
        status: 'fail',
        detail: `PostgreSQL at ${where} does not answer: ${(error as Error).message}`,
        fix: 'start PostgreSQL or correct store.url (RUNNER_STORE_URL): host, port, database, user and sslmode',
      },
    ];
  }
  try {
    return [await versionCheck(store, where), await migrationCheck(store, (await ctx.schemas?.()) ?? [])];
  } catch (error) {
    return [{ name: 'store', status: 'fail', detail: `PostgreSQL at ${where}: ${(error as Error).message}` }];
  } finally {
    await store.close();
  }
}

async function versionCheck(store: PostgresStore, where: string): Promise<DoctorCheck> {
  const row = await store.get<{ version: string }>("SELECT current_setting('server_version') AS version");
  const version = row?.version ?? 'unknown';
  const major = Number.parseInt(version, 10);
  if (Number.isFinite(major) && major >= MIN_POSTGRES_MAJOR) {
    return { name: 'store', status: 'ok', detail: `PostgreSQL ${version} at ${where}` };
  }
  return {
    name: 'store',
    status: 'fail',
    detail: `PostgreSQL ${version} at ${where} is older than ${MIN_POSTGRES_MAJOR}`,
    fix: `upgrade PostgreSQL to ${MIN_POSTGRES_MAJOR} or newer (tested on 15)`,
  };
}

/** Applied migrations against this build's: up to date, pending (a master applies them), or ahead. */
export async function migrationCheck(
  store: Pick<PostgresStore, 'all' | 'get' | 'dialect'>,
  schemas: readonly StoreSchema[],
): Promise<DoctorCheck> {
  if (!(await hasTable(store, '_migrations'))) {
    return {
      name: 'schema',
      status: 'info',
      detail: 'the database is empty',
      fix: 'a master creates the schema when it starts (runner server --store ...), or runner db copy fills it from a data directory',
    };
  }
  const rows = await store.all<{ owner: string; id: number }>('SELECT owner, id FROM _migrations');
  const applied = new Set(rows.map((r) => `${r.owner}#${r.id}`));
  const known = new Set(schemas.flatMap((s) => s.migrations.map((m) => `${s.owner}#${m.id}`)));
  const unknown = [...applied].filter((m) => !known.has(m));
  const pending = [...known].filter((m) => !applied.has(m));
  if (unknown.length > 0) {
    return {
      name: 'schema',
      status: 'fail',
      detail: `the database has migrations this build does not know (${unknown.slice(0, 5).join(', ')}): a newer runner wrote it`,
      fix: 'run the runner version that migrated it, or upgrade this one',
    };
  }
  if (pending.length > 0) {
    const owners = [...new Set(pending.map((m) => m.split('#')[0]))];
    return {
      name: 'schema',
      status: 'info',
      detail: `${pending.length} migration${pending.length === 1 ? '' : 's'} pending (${owners.join(', ')})`,
      fix: 'a master of this version applies them when it starts (runner server --store ...)',
    };
  }
  return { name: 'schema', status: 'ok', detail: `up to date (${applied.size} migrations)` };
}
