import {
  luaMultiple,
  type LuaFunctionRef,
  type LuaModuleImplementation,
  type LuaValue,
  formatDuration,
  parseDurationArgument,
  isLuaTable,
  luaType,
  sleep,
} from '@runner/plugin-sdk';
import type { GoroutineFunction } from './spec.js';

/** Finished goroutines nobody waited for that are kept; beyond it the oldest are forgotten. */
export const MAX_UNWAITED = 10_000;

type Outcome = { ok: true; values: LuaValue[] } | { ok: false; error: unknown };

interface Goroutine {
  id: number;
  done: Promise<Outcome>;
  outcome?: Outcome;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function isFunction(value: unknown): value is LuaFunctionRef {
  return luaType(value) === 'function';
}

/** Settles as an outcome, never rejects: an error belongs to whoever collects it, not to Node. */
function settle(fn: LuaFunctionRef, args: LuaValue[]): Promise<Outcome> {
  let started: Promise<LuaValue[]>;
  try {
    started = fn.call(...args);
  } catch (error) {
    return Promise.resolve({ ok: false, error });
  }
  return started.then(
    (values) => ({ ok: true as const, values }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function parseTasks(arg: LuaValue): { tasks: LuaValue[]; limit: number } {
  const usage = 'a list of functions or { tasks = {...}, max_concurrent = n }';
  if (!isLuaTable(arg)) throw new Error(`goroutine.parallel: argument 1 must be ${usage}, got ${luaType(arg)}`);
  if (Array.isArray(arg)) return { tasks: arg, limit: Infinity };
  const keys = Object.keys(arg);
  if (!keys.includes('tasks')) {
    throw new Error(`goroutine.parallel: argument 1 must be ${usage}, got a table without tasks`);
  }
  for (const key of keys) {
    if (key !== 'tasks' && key !== 'max_concurrent') {
      throw new Error(`goroutine.parallel: unknown option "${key}" (known: tasks, max_concurrent)`);
    }
  }
  if (!isLuaTable(arg.tasks) || !Array.isArray(arg.tasks)) {
    // An empty table may arrive as {}: that is an empty list too.
    if (isLuaTable(arg.tasks) && Object.keys(arg.tasks).length === 0) return { tasks: [], limit: Infinity };
    throw new Error(`goroutine.parallel: option tasks must be a list of functions, got ${luaType(arg.tasks)}`);
  }
  let limit = Infinity;
  const max = arg.max_concurrent;
  if (max !== undefined && max !== null) {
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) {
      throw new Error(
        `goroutine.parallel: option max_concurrent must be a positive integer, got ${typeof max === 'number' ? max : luaType(max)}`,
      );
    }
    limit = max;
  }
  return { tasks: arg.tasks, limit };
}

export function createGoroutineModule(): LuaModuleImplementation<GoroutineFunction> {
  let nextId = 1;
  const running = new Map<number, Goroutine>();
  /** Finished and not yet waited for, oldest first (Map keeps insertion order). */
  const finished = new Map<number, Goroutine>();

  function handleId(value: LuaValue): number {
    const id = isLuaTable(value) && !Array.isArray(value) ? value.id : value;
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      throw new Error(`goroutine.wait: argument 1 must be a handle from goroutine.spawn, got ${luaType(value)}`);
    }
    return id;
  }

  return {
    async parallel(call, arg) {
      const { tasks, limit } = parseTasks(arg);
      tasks.forEach((task, i) => {
        if (!isFunction(task))
          throw new Error(`goroutine.parallel: task ${i + 1} must be a function, got ${luaType(task)}`);
      });
      const outcomes: Outcome[] = new Array(tasks.length);
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < tasks.length) {
          const i = next++;
          outcomes[i] = call.signal.aborted
            ? { ok: false, error: new Error('not started: the task was cancelled') }
            : await settle(tasks[i] as LuaFunctionRef, []);
        }
      };
      await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
      const failed = outcomes.flatMap((o, i) => (o.ok ? [] : [`task ${i + 1} failed: ${errorMessage(o.error)}`]));
      if (failed.length === 1) throw new Error(`goroutine.parallel: ${failed[0]}`);
      if (failed.length > 1) {
        throw new Error(`goroutine.parallel: ${failed.length} of ${tasks.length} tasks failed: ${failed.join('; ')}`);
      }
      return outcomes.map((o) => (o.ok ? (o.values[0] ?? null) : null));
    },

    spawn(call, fn, ...args) {
      if (!isFunction(fn)) throw new Error(`goroutine.spawn: argument 1 must be a function, got ${luaType(fn)}`);
      const id = nextId++;
      const g: Goroutine = { id, done: settle(fn, args) };
      running.set(id, g);
      void g.done.then((outcome) => {
        g.outcome = outcome;
        running.delete(id);
        finished.set(id, g);
        if (!outcome.ok) call.logger.debug(`goroutine ${id} failed: ${errorMessage(outcome.error)}`);
        if (finished.size > MAX_UNWAITED) finished.delete(finished.keys().next().value as number);
      });
      return { id };
    },

    async wait(call, handle, timeout) {
      const id = handleId(handle);
      const ms =
        timeout === undefined || timeout === null
          ? undefined
          : parseDurationArgument(timeout, 'goroutine.wait: argument 2');
      const g = running.get(id) ?? finished.get(id);
      if (!g) {
        throw new Error(`goroutine.wait: no goroutine ${id} (already waited for, or not made by goroutine.spawn)`);
      }
      let outcome = g.outcome;
      if (!outcome) {
        const waits: Promise<Outcome | 'timeout'>[] = [g.done];
        const controller = new AbortController();
        const stop = () => controller.abort();
        call.signal.addEventListener('abort', stop, { once: true });
        try {
          waits.push(
            sleep(ms ?? 2 ** 31 - 1, controller.signal).then((full) => {
              if (!full) throw new Error('goroutine.wait: cancelled');
              return 'timeout' as const;
            }),
          );
          const first = await Promise.race(waits);
          if (first === 'timeout') {
            throw new Error(`goroutine.wait: goroutine ${id} still running after ${formatDuration(ms!)}`);
          }
          outcome = first;
        } finally {
          call.signal.removeEventListener('abort', stop);
          if (!call.signal.aborted) controller.abort(); // clears the timer
        }
      }
      finished.delete(id);
      running.delete(id);
      if (!outcome.ok) throw new Error(`goroutine.wait: goroutine ${id} failed: ${errorMessage(outcome.error)}`);
      return luaMultiple(...outcome.values);
    },

    async sleep(call, duration) {
      if (duration === undefined || duration === null)
        throw new Error('goroutine.sleep: argument 1 must be a duration, got nil');
      const ms = parseDurationArgument(duration, 'goroutine.sleep: argument 1');
      if (!(await sleep(ms, call.signal))) throw new Error('goroutine.sleep: cancelled');
      return undefined;
    },
  };
}
