import {
  isLuaTable,
  luaType,
  STATE_SCOPES,
  type LuaCallContext,
  type LuaModuleImplementation,
  type LuaValue,
  type StateCaller,
  type StateRequest,
  type StateScope,
  type StateService,
} from '@runner/plugin-sdk';
import { checkKey } from './request.js';
import { OUTSIDE_RUN, type StateFunction } from './spec.js';

export { MAX_KEY_LENGTH, MAX_VALUE_BYTES } from './request.js';

function scopeOf(fn: string, opts: LuaValue, position: number): StateScope {
  if (opts === undefined || opts === null) return 'workflow';
  if (!isLuaTable(opts))
    throw new Error(`state.${fn}: argument ${position} must be a table of options, got ${luaType(opts)}`);
  if (Array.isArray(opts)) {
    if (opts.length > 0)
      throw new Error(`state.${fn}: argument ${position} must be a table with named options (scope), got a list`);
    return 'workflow';
  }
  for (const k of Object.keys(opts)) {
    if (k !== 'scope') throw new Error(`state.${fn}: unknown option "${k}" (known: scope)`);
  }
  if (opts.scope === undefined || opts.scope === null) return 'workflow';
  if (!(STATE_SCOPES as readonly unknown[]).includes(opts.scope)) {
    throw new Error(
      `state.${fn}: option scope must be "workflow", "task" or "global", got ${typeof opts.scope === 'string' ? JSON.stringify(opts.scope) : luaType(opts.scope)}`,
    );
  }
  return opts.scope as StateScope;
}

/** The run a call belongs to; outside a run (the REPL) the workflow and task scopes use OUTSIDE_RUN. */
function callerOf(call: LuaCallContext): StateCaller {
  return {
    workflow: call.run?.workflow ?? OUTSIDE_RUN,
    task: call.run?.task ?? OUTSIDE_RUN,
    runId: call.run?.runId,
    dryRun: call.dryRun,
  };
}

/** For messages: `workflow "deploy"`. */
function labelOf(scope: StateScope, caller: StateCaller): string {
  if (scope === 'global') return 'global scope';
  const workflow = JSON.stringify(caller.workflow);
  return scope === 'workflow' ? `workflow ${workflow}` : `task ${JSON.stringify(caller.task)} of workflow ${workflow}`;
}

/**
 * The `state` Lua module: reads its arguments and leaves the work to the state service, which is
 * the store's on a master or embedded, and the master's (over the agent's stream) on an agent.
 */
export function createStateModule(service: StateService): LuaModuleImplementation<StateFunction> {
  function perform(call: LuaCallContext, request: StateRequest) {
    return service.perform(request, callerOf(call), call.signal);
  }

  /** set and clear: `{changed}`, or in dry-run what would have happened. */
  async function write(call: LuaCallContext, request: StateRequest, clears: boolean) {
    const { changed = false } = await perform(call, request);
    if (!call.dryRun) return { changed };
    const where = labelOf(request.scope, callerOf(call));
    const action = clears ? 'clear' : 'set';
    return {
      changed: false,
      skipped: true,
      would_change: changed,
      note: changed
        ? `dry-run: would ${action} "${request.key}" in ${where}`
        : `dry-run: "${request.key}" in ${where} already ${clears ? 'has no value' : 'holds this value'}`,
    };
  }

  return {
    // Reads stay synchronous where the service answers at once (over a store), so they work where
    // Lua cannot wait; on an agent they wait for the master.
    get(call, key, opts) {
      const request = { operation: 'get', scope: scopeOf('get', opts, 2), key: checkKey('get', key) } as const;
      return map(perform(call, request), (answer) => answer.value ?? null);
    },

    keys(call, opts) {
      const request = { operation: 'keys', scope: scopeOf('keys', opts, 1), key: '' } as const;
      return map(perform(call, request), (answer) => answer.keys ?? []);
    },

    async set(call, key, value, opts) {
      // nil clears: `state.set(k, nil)` reads as "k has no value from now on".
      const request = { operation: 'set', scope: scopeOf('set', opts, 3), key: checkKey('set', key), value } as const;
      return write(call, request, value === null || value === undefined);
    },

    async changed(call, key, value, opts) {
      const request = {
        operation: 'changed',
        scope: scopeOf('changed', opts, 3),
        key: checkKey('changed', key),
        value,
      };
      return (await perform(call, request as StateRequest)).changed ?? false;
    },

    async clear(call, key, opts) {
      const request = { operation: 'clear', scope: scopeOf('clear', opts, 2), key: checkKey('clear', key) } as const;
      return write(call, request, true);
    },
  };
}

/** `f` of a value that may still be on its way, without making a promise of one that is not. */
function map<T, U>(value: T | Promise<T>, f: (value: T) => U): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}
