import type {
  LuaValue,
  Migration,
  StateAnswer,
  StateCaller,
  StateRequest,
  StateService,
  Store,
} from '@runner/plugin-sdk';
import { checkRequest, encodeValue } from './request.js';

export const STATE_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'state table: values of the Lua state module',
    // workflow and task are '' where the scope does not use them, so one primary key covers all scopes.
    sql: `CREATE TABLE state (
      scope TEXT NOT NULL,
      workflow TEXT NOT NULL,
      task TEXT NOT NULL,
      key TEXT NOT NULL,
      value TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (scope, workflow, task, key)
    )`,
  },
];

const SELECT = 'SELECT value FROM state WHERE scope = ? AND workflow = ? AND task = ? AND key = ?';
const UPSERT = `INSERT INTO state (scope, workflow, task, key, value, updated_at) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (scope, workflow, task, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;
const DELETE = 'DELETE FROM state WHERE scope = ? AND workflow = ? AND task = ? AND key = ?';
const KEYS = 'SELECT key FROM state WHERE scope = ? AND workflow = ? AND task = ? ORDER BY key';

/** The row a key lives in: workflow and task are '' where the scope does not use them. */
function rowOf(request: StateRequest, caller: StateCaller): [string, string, string, string] {
  const { scope, key } = request;
  if (scope === 'global') return [scope, '', '', key];
  return [scope, caller.workflow, scope === 'task' ? caller.task : '', key];
}

/**
 * The state service over the store: what the `state` module does on a master or in an embedded
 * run, and what the master does for its agents' requests.
 */
export function createStoreState(store: Store, now: () => Date = () => new Date()): StateService {
  /** Per-key queues: a read-compare-write on one key must not interleave with another. */
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(row: readonly string[], task: () => Promise<T>): Promise<T> {
    const id = JSON.stringify(row);
    const previous = queues.get(id) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.then(
      () => {},
      () => {},
    );
    queues.set(id, tail);
    // Forget the queue once it drains, so keys used once do not accumulate.
    void tail.then(() => {
      if (queues.get(id) === tail) queues.delete(id);
    });
    return next;
  }

  const stored = async (row: readonly string[]) => (await store.get<{ value: string }>(SELECT, [...row]))?.value;

  return {
    perform(request, caller): Promise<StateAnswer> {
      // Requests also come off the wire (an agent's): checked here, where they are served.
      const { operation } = checkRequest(request);
      const row = rowOf(request, caller);
      if (operation === 'keys') {
        return store.all<{ key: string }>(KEYS, row.slice(0, 3)).then((rows) => ({ keys: rows.map((r) => r.key) }));
      }
      if (operation === 'get') {
        return stored(row).then((json) => ({ value: json === undefined ? null : (JSON.parse(json) as LuaValue) }));
      }
      // set and changed store the value (nil clears); clear removes it. Nothing is written in dry-run.
      const json = operation === 'clear' ? undefined : encodeValue(operation, request.value);
      return serialized(row, async () => {
        const differs = (await stored(row)) !== json;
        if (differs && !caller.dryRun) {
          if (json === undefined) await store.run(DELETE, [...row]);
          else await store.run(UPSERT, [...row, json, now().toISOString()]);
        }
        return { changed: differs };
      });
    },
  };
}
