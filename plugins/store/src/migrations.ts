import { InvalidInputError, type Migration } from '@runner/plugin-sdk';

/** Refuses a migration list that is not one owner's increasing, positive, well-formed ids. */
export function checkMigrations(owner: string, migrations: readonly Migration[]): void {
  if (typeof owner !== 'string' || owner === '') {
    throw new InvalidInputError('migrate needs an owner', { field: 'owner' });
  }
  if (!Array.isArray(migrations)) throw new InvalidInputError('migrations must be an array', { field: 'migrations' });
  migrations.forEach((m, i) => {
    if (!Number.isSafeInteger(m?.id) || m.id < 1) {
      throw new InvalidInputError(`migration ${i} of ${owner}: id must be a positive integer`, {
        field: `migrations[${i}].id`,
      });
    }
    if (typeof m.sql !== 'string' || typeof m.description !== 'string') {
      throw new InvalidInputError(`migration ${m.id} of ${owner}: sql and description must be strings`, {
        field: `migrations[${i}]`,
      });
    }
    if (i > 0 && m.id <= migrations[i - 1].id) {
      throw new InvalidInputError(`migration ids of ${owner} must increase: ${m.id} follows ${migrations[i - 1].id}`, {
        field: `migrations[${i}].id`,
      });
    }
  });
}

/**
 * The migrations of `migrations` not yet applied (`appliedIds`), in order; refuses one older than
 * the newest applied (ids must only grow, or a database would miss it).
 */
export function pendingMigrations(
  owner: string,
  migrations: readonly Migration[],
  appliedIds: readonly number[],
): Migration[] {
  const applied = new Set(appliedIds);
  const newest = Math.max(0, ...applied);
  const pending = migrations.filter((m) => !applied.has(m.id));
  const late = pending.find((m) => m.id < newest);
  if (late !== undefined) {
    throw new InvalidInputError(
      `migration ${late.id} (${late.description}) of ${owner} is older than the applied migration ${newest}; ` +
        `ids must increase`,
      { field: 'migrations' },
    );
  }
  return pending;
}
