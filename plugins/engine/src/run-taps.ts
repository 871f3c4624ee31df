import {
  messageOf,
  type RunTapPoint,
  type RunTaps,
  type Logger,
  type Refusal,
  type RunTapContext,
  type RunRecord,
  type TaskTapContext,
  type TaskResult,
} from '@runner/plugin-sdk';

interface Tap<A extends unknown[], R> {
  name: string;
  fn: (...args: A) => R | Promise<R>;
}

/** One tap point with its taps in the order added; `taps` is read by the engine to skip empty points. */
export interface TapList<A extends unknown[], R> extends RunTapPoint<A, R> {
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
        throw new TypeError('engine run tap: name must be a non-empty string (it names the tap in refusals and logs)');
      if (typeof fn !== 'function') throw new TypeError(`engine run tap "${name}": fn must be a function`);
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

export interface RunTapLists extends RunTaps {
  beforeRun: TapList<[RunTapContext], Refusal>;
  beforeTask: TapList<[TaskTapContext], Refusal>;
  afterTask: TapList<[TaskTapContext, Omit<TaskResult, 'log'>], void>;
  afterRun: TapList<[Omit<RunRecord, 'tasks'>], void>;
}

export function createRunTaps(): RunTapLists {
  return { beforeRun: tapList(), beforeTask: tapList(), afterTask: tapList(), afterRun: tapList() };
}

/**
 * Asks every before-tap in order; the first refusal wins. Returns the reason to record (naming the
 * tap) or undefined to go on. A tap that throws refuses: a policy that cannot decide must not let
 * the run through.
 */
export async function askBefore<A extends unknown[]>(
  point: TapList<A, Refusal>,
  ...args: A
): Promise<string | undefined> {
  for (const { name, fn } of point.taps) {
    let answer: Refusal;
    try {
      answer = await fn(...args);
    } catch (error) {
      return `refused by ${name}: the tap failed: ${messageOf(error)}`;
    }
    if (answer && typeof answer === 'object' && 'refuse' in answer)
      return `refused by ${name}: ${String(answer.refuse) || 'no reason given'}`;
  }
  return undefined;
}

/** Tells every after-tap; a failure is logged with the tap's name and affects nothing else. */
export async function tellAfter<A extends unknown[]>(
  point: TapList<A, void>,
  logger: Logger,
  pointName: string,
  ...args: A
): Promise<void> {
  for (const { name, fn } of point.taps) {
    try {
      await fn(...args);
    } catch (error) {
      logger.warn(`engine run tap ${pointName} "${name}" failed: ${messageOf(error)}`, {
        tapPoint: pointName,
        tap: name,
      });
    }
  }
}
