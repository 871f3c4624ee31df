import type { LuaCallContext, LuaModuleImplementation, LuaValue, Migration, Store } from '@runner/plugin-sdk';
import { canonicalJson } from './canonical-json.js';
import { isLuaTable, luaType } from '@runner/plugin-sdk';
import { OUTSIDE_RUN, type StateFunction } from './spec.js';

export const MAX_VALUE_BYTES = 1024 * 1024;
export const MAX_KEY_LENGTH = 512;
const SCOPES = ['workflow', 'task', 'global'] as const;
type Scope = (typeof SCOPES)[number];

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

interface Place {
  scope: Scope;
  workflow: string;
  task: string;
  key: string;
  /** For messages: `workflow "deploy"`. */
  label: string;
}

function scopeOf(fn: string, call: LuaCallContext, opts: LuaValue, position: number): Omit<Place, 'key'> {
  let scope: Scope = 'workflow';
  if (opts !== undefined && opts !== null) {
    if (!isLuaTable(opts))
      throw new Error(`state.${fn}: argument ${position} must be a table of options, got ${luaType(opts)}`);
    if (!Array.isArray(opts)) {
      for (const k of Object.keys(opts)) {
        if (k !== 'scope') throw new Error(`state.${fn}: unknown option "${k}" (known: scope)`);
      }
      if (opts.scope !== undefined && opts.scope !== null) {
        if (!(SCOPES as readonly unknown[]).includes(opts.scope)) {
          throw new Error(
            `state.${fn}: option scope must be "workflow", "task" or "global", got ${typeof opts.scope === 'string' ? JSON.stringify(opts.scope) : luaType(opts.scope)}`,
          );
        }
        scope = opts.scope as Scope;
      }
    } else if (opts.length > 0) {
      throw new Error(`state.${fn}: argument ${position} must be a table with named options (scope), got a list`);
    }
  }
  const workflow = call.run?.workflow ?? OUTSIDE_RUN;
  const task = call.run?.task ?? OUTSIDE_RUN;
  if (scope === 'global') return { scope, workflow: '', task: '', label: 'global scope' };
  if (scope === 'workflow') return { scope, workflow, task: '', label: `workflow ${JSON.stringify(workflow)}` };
  return { scope, workflow, task, label: `task ${JSON.stringify(task)} of workflow ${JSON.stringify(workflow)}` };
}

function keyOf(fn: string, key: LuaValue): string {
  if (typeof key !== 'string' || key === '') {
    throw new Error(
      `state.${fn}: argument 1 must be a key (a non-empty string), got ${key === '' ? 'an empty string' : luaType(key)}`,
    );
  }
  if (key.length > MAX_KEY_LENGTH)
    throw new Error(`state.${fn}: key is ${key.length} characters long (at most ${MAX_KEY_LENGTH})`);
  return key;
}

function encode(fn: string, value: LuaValue): string {
  const json = canonicalJson(value, `state.${fn}: argument 2`);
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_VALUE_BYTES) {
    throw new Error(`state.${fn}: value is ${bytes} bytes as JSON (at most ${MAX_VALUE_BYTES})`);
  }
  return json;
}

/**
 * The `state` module over the store. Without a store (the agent profile has none) every function
 * raises a clear error instead of silently keeping state that would not survive a restart.
 */
export function createStateModule(
  store: Store | undefined,
  now: () => Date = () => new Date(),
): LuaModuleImplementation<StateFunction> {
  /** Per-key queues: a read-compare-write on one key must not interleave with another. */
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(place: Place, task: () => Promise<T>): Promise<T> {
    const id = JSON.stringify([place.scope, place.workflow, place.task, place.key]);
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

  function requireStore(fn: string): Store {
    if (!store) {
      throw new Error(
        `state.${fn}: no durable store in this process (the agent profile has none); run the workflow on the master or embedded`,
      );
    }
    return store;
  }

  function place(fn: string, call: LuaCallContext, key: LuaValue, opts: LuaValue, optsPosition: number): Place {
    return { ...scopeOf(fn, call, opts, optsPosition), key: keyOf(fn, key) };
  }

  const params = (p: Place) => [p.scope, p.workflow, p.task, p.key];
  const stored = (s: Store, p: Place) => s.get<{ value: string }>(SELECT, params(p))?.value;

  async function write(s: Store, p: Place, json: string | undefined): Promise<void> {
    if (json === undefined) await s.run(DELETE, params(p));
    else await s.run(UPSERT, [...params(p), json, now().toISOString()]);
  }

  /** set, changed and clear: store `json` (undefined = remove) when it differs; true when it did. */
  async function apply(fn: string, call: LuaCallContext, p: Place, json: string | undefined): Promise<boolean> {
    const s = requireStore(fn);
    return serialized(p, async () => {
      const differs = stored(s, p) !== json;
      if (differs && !call.dryRun) await write(s, p, json);
      return differs;
    });
  }

  const dryRunNote = (p: Place, differs: boolean, action: string) => ({
    changed: false,
    skipped: true,
    would_change: differs,
    note: differs
      ? `dry-run: would ${action} "${p.key}" in ${p.label}`
      : `dry-run: "${p.key}" in ${p.label} already ${action === 'clear' ? 'has no value' : 'holds this value'}`,
  });

  return {
    get(call, key, opts) {
      const p = place('get', call, key, opts, 2);
      const json = stored(requireStore('get'), p);
      return json === undefined ? null : (JSON.parse(json) as LuaValue);
    },

    keys(call, opts) {
      const p = scopeOf('keys', call, opts, 1);
      return requireStore('keys')
        .all<{ key: string }>(KEYS, [p.scope, p.workflow, p.task])
        .map((row) => row.key);
    },

    async set(call, key, value, opts) {
      const p = place('set', call, key, opts, 3);
      // nil clears: `state.set(k, nil)` reads as "k has no value from now on".
      const json = value === null || value === undefined ? undefined : encode('set', value);
      const differs = await apply('set', call, p, json);
      return call.dryRun ? dryRunNote(p, differs, json === undefined ? 'clear' : 'set') : { changed: differs };
    },

    async changed(call, key, value, opts) {
      const p = place('changed', call, key, opts, 3);
      const json = value === null || value === undefined ? undefined : encode('changed', value);
      return apply('changed', call, p, json);
    },

    async clear(call, key, opts) {
      const p = place('clear', call, key, opts, 2);
      const differs = await apply('clear', call, p, undefined);
      return call.dryRun ? dryRunNote(p, differs, 'clear') : { changed: differs };
    },
  };
}
