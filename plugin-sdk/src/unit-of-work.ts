import type { Store, StoreTransaction } from './store.js';

/**
 * Writes of several plugins that commit together or not at all (a GitOps sync writes flows,
 * hooks and schedules as one). The plugin that needs it opens it with `withUnitOfWork` and hands
 * it to each service's write method that takes a `unit` (FlowsService.applyBatch,
 * HooksService.put, SchedulesService.put, ...). A service taking part in a unit:
 *
 * - reads and writes only through `unit.tx`: on the embedded store the transaction holds every
 *   other read and write of the store until it ends, and on PostgreSQL only `tx` sees the unit's
 *   own writes (a job may name a flow written earlier in the same unit);
 * - checks nothing through other services or the store itself inside it: what needs them is
 *   checked before the unit opens (the service's `check`, the engine's validation);
 * - defers to `unit.afterCommit` what nobody may see before the commit: its in-memory copies, the
 *   notices to other masters, the events and announcements. These run once the unit committed,
 *   in the order they were added; when it rolls back, none runs.
 *
 * Called without a unit, the same methods open one of their own: there is one way to write.
 */
export interface UnitOfWork {
  /** The one transaction every participant reads and writes through. */
  readonly tx: StoreTransaction;
  /** Runs `effect` once the whole unit committed (never when it rolled back). */
  afterCommit(effect: () => unknown): void;
}

/** What `withUnitOfWork` does with an after-commit effect that fails: the unit committed all the same. */
export type EffectFailureHandler = (error: Error) => void;

/**
 * Runs `work` in one store transaction (Store.withTransaction: all or nothing), then, once it
 * committed, the effects the participants deferred. It rejects with `work`'s error (or the
 * commit's), nothing written and no effect run. An effect that fails is handed to `onEffectError`
 * and does not stop the others: its writes are durable, so the unit is not reported failed.
 */
export async function withUnitOfWork<T>(
  store: Pick<Store, 'withTransaction'>,
  work: (unit: UnitOfWork) => Promise<T>,
  onEffectError: EffectFailureHandler,
): Promise<T> {
  const effects: (() => unknown)[] = [];
  const result = await store.withTransaction((tx) => work({ tx, afterCommit: (effect) => effects.push(effect) }));
  for (const effect of effects) {
    try {
      await effect();
    } catch (error) {
      onEffectError(error as Error);
    }
  }
  return result;
}

/**
 * Joins the caller's unit when there is one, else opens one of the service's own: the body of a
 * write method that takes an optional `unit`. Joined, the effects' failures go to the handler of
 * whoever opened the unit; `onEffectError` serves only a unit opened here.
 */
export function inUnitOfWork<T>(
  store: Pick<Store, 'withTransaction'>,
  unit: UnitOfWork | undefined,
  work: (unit: UnitOfWork) => Promise<T>,
  onEffectError: EffectFailureHandler,
): Promise<T> {
  return unit ? work(unit) : withUnitOfWork(store, work, onEffectError);
}
