import {
  didYouMean,
  InvalidInputError,
  NotFoundError,
  RunnerError,
  type Migration,
  type SecretsService,
  type Store,
} from '@runner/plugin-sdk';
import { describeSource, type KeySource } from './key-source.js';
import { open, seal, type SecretKey } from './sealing.js';

export const SECRET_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'sealed secret values per scope',
    sql: `CREATE TABLE secrets (
      scope TEXT NOT NULL,
      name TEXT NOT NULL,
      sealed TEXT NOT NULL,
      key_id TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      updated_by TEXT NOT NULL DEFAULT '',
      PRIMARY KEY (scope, name)
    );`,
  },
];

/** A name scripts can write after `secrets.` (a Lua identifier). */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const SECRET_NAME_RULE =
  'a letter or _, then letters, digits or _ (at most 64), so scripts can write secrets.<name>';
/** A stack's name, or a reserved owner scope such as `ssh-profile:web-1`. */
export const SCOPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** Largest value kept: a private key or a certificate chain fits; a file does not belong here. */
export const MAX_SECRET_BYTES = 64 * 1024;

export interface SecretListing {
  name: string;
  updated_at: string;
  updated_by: string;
}

interface SecretRow {
  scope: string;
  name: string;
  sealed: string;
  key_id: string;
  updated_at: string;
  updated_by: string;
}

export function checkScope(scope: unknown): string {
  if (typeof scope !== 'string' || !SCOPE_PATTERN.test(scope))
    throw new InvalidInputError(
      `scope ${JSON.stringify(scope)} is not valid: a stack name, or an owner scope such as ssh-profile:<name>`,
      { field: 'stack' },
    );
  return scope;
}

export function checkSecretName(name: unknown): string {
  if (typeof name !== 'string' || !SECRET_NAME_PATTERN.test(name))
    throw new InvalidInputError(`secret name ${JSON.stringify(name)} is not valid: use ${SECRET_NAME_RULE}`, {
      field: 'name',
    });
  return name;
}

const contextOf = (scope: string, name: string) => `${scope}/${name}`;

/**
 * The secrets service: every value sealed (AES-256-GCM, sealing.ts) before it reaches the store,
 * with the id of the key that sealed it; plaintext only from `reveal`/`revealAll`, to master code.
 */
export class SecretStore implements SecretsService {
  #checkStack: (stack: string) => Promise<void> = () => Promise.resolve();

  constructor(
    private readonly store: Store,
    readonly keys: KeySource,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Migrates, settles a rotation a stop interrupted, and says (rather than failing later, one
   * value at a time) when stored values were sealed under a key this master does not hold: a
   * store restored or copied without its key.
   */
  async open(): Promise<{ settled?: 'finished' | 'abandoned'; unreadable: number; problem?: string }> {
    await this.store.migrate('secrets', SECRET_MIGRATIONS);
    await this.keys.load();
    const stored = await this.storedKeyIds();
    const settled = await this.keys.settleRotation(new Set(stored.keys()));
    const held = new Set(this.keys.keys().map((key) => key.id));
    const unreadable = [...stored].filter(([id]) => !held.has(id)).reduce((sum, [, count]) => sum + count, 0);
    if (unreadable === 0) return { ...(settled ? { settled } : {}), unreadable };
    const ids = [...stored.keys()].filter((id) => !held.has(id));
    return { ...(settled ? { settled } : {}), unreadable, problem: this.mismatch(ids, `${unreadable} secret(s)`) };
  }

  /** How many values each key id sealed. */
  private async storedKeyIds(): Promise<Map<string, number>> {
    const rows = await this.store.all<{ key_id: string; count: number | string }>(
      'SELECT key_id, COUNT(*) AS count FROM secrets GROUP BY key_id',
    );
    return new Map(rows.map((row) => [row.key_id, Number(row.count)]));
  }

  private mismatch(ids: readonly string[], what: string): string {
    const source = describeSource(this.keys.settings);
    const held = this.keys.keys();
    const holds = held.length === 0 ? 'holds no key' : `holds key ${held.map((k) => k.id).join(', ')}`;
    return (
      `${what} sealed under key ${ids.join(', ')} cannot be opened: ${source} ${holds}. ` +
      'A store restored or copied without its key cannot open its secrets: give this master the key of the master ' +
      'that sealed them (its secrets/master.key, or secrets.key_file / secrets.key_env), or add the secrets again'
    );
  }

  private keyFor(row: SecretRow): SecretKey {
    const key = this.keys.keys().find((k) => k.id === row.key_id);
    if (key) return key;
    throw new RunnerError('secrets_key_mismatch', this.mismatch([row.key_id], `secret ${row.name} of ${row.scope}`), {
      status: 503,
      details: { scope: row.scope, name: row.name },
    });
  }

  async put(scope: string, name: string, value: string, actor = ''): Promise<void> {
    checkScope(scope);
    checkSecretName(name);
    if (typeof value !== 'string' || value.length === 0)
      throw new InvalidInputError(`secret ${name}: the value is empty`, { field: 'value' });
    if (Buffer.byteLength(value) > MAX_SECRET_BYTES)
      throw new InvalidInputError(`secret ${name}: the value is over ${MAX_SECRET_BYTES} bytes`, { field: 'value' });
    const key = await this.keys.sealingKey();
    await this.store.run(
      `INSERT INTO secrets (scope, name, sealed, key_id, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, name) DO UPDATE SET sealed = excluded.sealed, key_id = excluded.key_id,
         updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
      [scope, name, seal(key, contextOf(scope, name), value), key.id, this.now().toISOString(), actor],
    );
  }

  async reveal(scope: string, name: string): Promise<string> {
    const row = await this.store.get<SecretRow>('SELECT * FROM secrets WHERE scope = ? AND name = ?', [scope, name]);
    if (!row) throw await this.missing(scope, name);
    return open(this.keyFor(row), contextOf(scope, name), row.sealed);
  }

  /** The error for a name a scope does not hold, naming it and the nearest one it does. */
  async missing(scope: string, name: string): Promise<NotFoundError> {
    const names = (await this.list(scope)).map((secret) => secret.name);
    return new NotFoundError(`secret ${name} does not exist in ${scope}${didYouMean(name, names)}`, {
      details: { scope, name },
    });
  }

  async revealAll(scope: string): Promise<Record<string, string>> {
    const rows = await this.store.all<SecretRow>('SELECT * FROM secrets WHERE scope = ? ORDER BY name', [scope]);
    const values: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const row of rows) values[row.name] = open(this.keyFor(row), contextOf(scope, row.name), row.sealed);
    return values;
  }

  async remove(scope: string, name: string): Promise<boolean> {
    const { changes } = await this.store.run('DELETE FROM secrets WHERE scope = ? AND name = ?', [scope, name]);
    return changes > 0;
  }

  checkStacksWith(check: (stack: string) => Promise<void>): void {
    this.#checkStack = check;
  }

  /** Rejects when the API names a stack that does not exist (see checkStacksWith). */
  checkStack(stack: string): Promise<void> {
    return this.#checkStack(stack);
  }

  async list(scope: string): Promise<SecretListing[]> {
    return this.store.all<SecretListing>(
      'SELECT name, updated_at, updated_by FROM secrets WHERE scope = ? ORDER BY name',
      [scope],
    );
  }

  /** How many values each scope holds (a stack's secret count). */
  async counts(): Promise<Map<string, number>> {
    const rows = await this.store.all<{ scope: string; count: number | string }>(
      'SELECT scope, COUNT(*) AS count FROM secrets GROUP BY scope',
    );
    return new Map(rows.map((row) => [row.scope, Number(row.count)]));
  }

  /** Removes every value of a scope (a stack or a profile removed); how many went. */
  async removeScope(scope: string): Promise<number> {
    return (await this.store.run('DELETE FROM secrets WHERE scope = ?', [scope])).changes;
  }

  /**
   * A new key, and every value of every scope opened and sealed again under it in one
   * transaction: all or nothing. The new key is written (0600) beside the current one first and
   * becomes the key file only once the transaction committed; a failure leaves the store and the
   * key file as they were.
   */
  async rotateKey(): Promise<{ rotated: number; key_id: string; previous_key_id?: string }> {
    const previous = this.keys.keys()[0]?.id;
    const next = await this.keys.prepareRotation();
    let rotated = 0;
    try {
      await this.store.withTransaction(async (tx) => {
        const rows = await tx.all<SecretRow>('SELECT * FROM secrets ORDER BY scope, name');
        for (const row of rows) {
          const context = contextOf(row.scope, row.name);
          const plaintext = open(this.keyFor(row), context, row.sealed);
          await tx.run('UPDATE secrets SET sealed = ?, key_id = ? WHERE scope = ? AND name = ?', [
            seal(next, context, plaintext),
            next.id,
            row.scope,
            row.name,
          ]);
        }
        rotated = rows.length;
      });
    } catch (error) {
      await this.keys.abandonRotation();
      throw error;
    }
    await this.keys.commitRotation();
    return { rotated, key_id: next.id, ...(previous ? { previous_key_id: previous } : {}) };
  }
}
