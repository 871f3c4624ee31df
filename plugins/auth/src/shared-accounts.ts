import type { Cluster, Logger, Store } from '@runner/plugin-sdk';

/** Writes that arrive together make one reload on the other masters. */
const RELOAD_DELAY_MS = 20;
const WRITES = new Set<PropertyKey>(['run', 'transaction', 'withTransaction']);

/**
 * Accounts on a store several masters share: every master keeps users, tokens and revocations in
 * memory (the guard answers from maps), so a write here is announced and the others read theirs
 * again: a user added, a password changed, a token revoked or a session ended on one master holds
 * on every master. Returns the store the accounts write through (it announces each write).
 */
export function shareAccounts(
  store: Store,
  cluster: Cluster,
  reload: () => Promise<void>,
  logger: Logger,
): { store: Store; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const off = cluster.subscribe('auth.accounts', () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      reload().catch((error: Error) =>
        logger.warn(`reloading accounts changed by another master failed: ${error.message}`),
      );
    }, RELOAD_DELAY_MS);
  });
  const announcing = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!WRITES.has(key)) return method.bind(target);
      return async (...args: unknown[]) => {
        const result = await method.apply(target, args);
        cluster.publish('auth.accounts', null);
        return result;
      };
    },
  });
  return {
    store: announcing,
    stop() {
      off();
      clearTimeout(timer);
    },
  };
}
