import {
  messageOf,
  type EngineHook,
  type EngineHooks,
  type Logger,
  type Refusal,
  type RunHookContext,
  type RunRecord,
  type TaskHookContext,
  type TaskResult,
} from '@runner/plugin-sdk';

interface Tap<A extends unknown[], R> {
  name: string;
  fn: (...args: A) => R | Promise<R>;
}

/** One tap point with its taps in the order added; `taps` is read by the engine to skip empty hooks. */
export interface TapList<A extends unknown[], R> extends EngineHook<A, R> {
  readonly taps: readonly Tap<A, R>[];
}

function tapList<A extends unknown[], R>(): TapList<A, R> {
  let taps: Tap<A, R>[] = [];
  return {
    get taps() {
      return taps;
    },
    tap(name, fn) {
      if (typeof name !== 'string' || name === '')
        throw new TypeError('engine hook tap: name must be a non-empty string (it names the tap in refusals and logs)');
      if (typeof fn !== 'function') throw new TypeError(`engine hook tap "${name}": fn must be a function`);
      const entry = { name, fn };
      // Copied on change so that a run going through the list is not affected by a tap added or
      // removed meanwhile.
      taps = [...taps, entry];
      return () => {
        taps = taps.filter((t) => t !== entry);
      };
    },
  };
}

export interface EngineTaps extends EngineHooks {
  beforeRun: TapList<[RunHookContext], Refusal>;
  beforeTask: TapList<[TaskHookContext], Refusal>;
  afterTask: TapList<[TaskHookContext, Omit<TaskResult, 'log'>], void>;
  afterRun: TapList<[Omit<RunRecord, 'tasks'>], void>;
}

export function createHooks(): EngineTaps {
  return { beforeRun: tapList(), beforeTask: tapList(), afterTask: tapList(), afterRun: tapList() };
}

/**
 * Asks every before-tap in order; the first refusal wins. Returns the reason to record (naming the
 * tap) or undefined to go on. A tap that throws refuses: a policy that cannot decide must not let
 * the run through.
 */
export async function askBefore<A extends unknown[]>(
  hook: TapList<A, Refusal>,
  ...args: A
): Promise<string | undefined> {
  for (const { name, fn } of hook.taps) {
    let answer: Refusal;
    try {
      answer = await fn(...args);
    } catch (error) {
      return `refused by ${name}: the hook failed: ${messageOf(error)}`;
    }
    if (answer && typeof answer === 'object' && 'refuse' in answer)
      return `refused by ${name}: ${String(answer.refuse) || 'no reason given'}`;
  }
  return undefined;
}

/** Tells every after-tap; a failure is logged with the tap's name and affects nothing else. */
export async function tellAfter<A extends unknown[]>(
  hook: TapList<A, void>,
  logger: Logger,
  point: string,
  ...args: A
): Promise<void> {
  for (const { name, fn } of hook.taps) {
    try {
      await fn(...args);
    } catch (error) {
      logger.warn(`engine hook ${point} tap "${name}" failed: ${messageOf(error)}`, { hook: point, tap: name });
    }
  }
}
