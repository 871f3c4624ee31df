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
import type { ReliabilityFunction } from './spec.js';

export interface ReliabilityOptions {
  /** Milliseconds; the circuit breakers' clock (tests pass their own). */
  now?: () => number;
  /** Waits between retries; resolves after `ms` or rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

interface Circuit {
  state: 'closed' | 'open' | 'half_open';
  failures: number;
  openedAt: number;
  resetMs: number;
  trialRunning: boolean;
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

/** The default wait between attempts: rejects when the call is cancelled. */
async function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  if (!(await sleep(ms, signal))) throw new Error('cancelled');
}

function requireFunction(fn: string, value: LuaValue, position: number): LuaFunctionRef {
  if (luaType(value) !== 'function') {
    throw new Error(`reliability.${fn}: argument ${position} must be a function, got ${luaType(value)}`);
  }
  return value as LuaFunctionRef;
}

function optionsTable(
  fn: string,
  value: LuaValue,
  position: number,
  known: readonly string[],
): Record<string, LuaValue> {
  if (value === undefined || value === null) return {};
  if (!isLuaTable(value))
    throw new Error(`reliability.${fn}: argument ${position} must be a table of options, got ${luaType(value)}`);
  if (Array.isArray(value)) {
    if (value.length === 0) return {};
    throw new Error(`reliability.${fn}: argument ${position} must be a table with named options (${known.join(', ')})`);
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      throw new Error(`reliability.${fn}: unknown option "${key}" (known: ${known.join(', ')})`);
  }
  return value;
}

function positiveInteger(fn: string, name: string, value: LuaValue, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new Error(
      `reliability.${fn}: option ${name} must be a positive integer, got ${typeof value === 'number' ? value : luaType(value)}`,
    );
  }
  return value;
}

function duration(fn: string, name: string, value: LuaValue, fallback: number | undefined): number | undefined {
  if (value === undefined || value === null) return fallback;
  return parseDurationArgument(value, `reliability.${fn}: option ${name}`);
}

export function createReliabilityModule(
  options: ReliabilityOptions = {},
): LuaModuleImplementation<ReliabilityFunction> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? sleepFor;
  const circuits = new Map<string, Circuit>();

  function circuitName(fn: string, name: LuaValue): string {
    if (typeof name !== 'string' || name === '') {
      throw new Error(
        `reliability.${fn}: argument 1 must be the circuit's name (a non-empty string), got ${name === '' ? 'an empty string' : luaType(name)}`,
      );
    }
    return name;
  }

  function openError(name: string, c: Circuit): Error {
    const left = Math.max(0, c.resetMs - (now() - c.openedAt));
    const detail =
      c.state === 'half_open'
        ? 'a trial call is running'
        : `${c.failures} consecutive failure${c.failures === 1 ? '' : 's'}; next trial in ${formatDuration(Math.ceil(left))}`;
    return new Error(`reliability.circuit_breaker: circuit ${JSON.stringify(name)} is open (${detail})`);
  }

  return {
    async retry(call, opts, fn) {
      const o = optionsTable('retry', opts, 1, ['attempts', 'delay', 'backoff', 'max_delay']);
      const f = requireFunction('retry', fn, 2);
      const attempts = positiveInteger('retry', 'attempts', o.attempts, 3);
      const delay = duration('retry', 'delay', o.delay, 1000)!;
      const maxDelay = duration('retry', 'max_delay', o.max_delay, undefined);
      const backoff = o.backoff ?? 2;
      if (typeof backoff !== 'number' || !Number.isFinite(backoff) || backoff < 1) {
        throw new Error(
          `reliability.retry: option backoff must be a number of at least 1, got ${typeof backoff === 'number' ? backoff : luaType(backoff)}`,
        );
      }
      let lastError: unknown;
      for (let attempt = 1; attempt <= attempts; attempt++) {
        try {
          return luaMultiple(...(await f.call(attempt)));
        } catch (error) {
          lastError = error;
        }
        if (attempt === attempts) break;
        const wait = Math.min(delay * backoff ** (attempt - 1), maxDelay ?? Infinity);
        call.logger.warn(
          `reliability.retry: attempt ${attempt} of ${attempts} failed: ${errorMessage(lastError)}; retrying in ${formatDuration(Math.round(wait))}`,
          { attempt, attempts },
        );
        try {
          await sleep(Math.round(wait), call.signal);
        } catch {
          throw new Error(
            `reliability.retry: cancelled after attempt ${attempt} of ${attempts}: ${errorMessage(lastError)}`,
          );
        }
      }
      throw new Error(
        `reliability.retry: failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${errorMessage(lastError)}`,
        { cause: lastError },
      );
    },

    async circuit_breaker(_call, name, opts, fn) {
      const n = circuitName('circuit_breaker', name);
      const o = optionsTable('circuit_breaker', opts, 2, ['max_failures', 'reset_timeout']);
      const f = requireFunction('circuit_breaker', fn, 3);
      const maxFailures = positiveInteger('circuit_breaker', 'max_failures', o.max_failures, 5);
      const resetMs = duration('circuit_breaker', 'reset_timeout', o.reset_timeout, 30_000)!;
      let c = circuits.get(n);
      if (!c) {
        c = { state: 'closed', failures: 0, openedAt: 0, resetMs, trialRunning: false };
        circuits.set(n, c);
      }
      // The latest options win: a workflow edited to a longer reset applies from its next call.
      c.resetMs = resetMs;
      if (c.state === 'open') {
        if (now() - c.openedAt < c.resetMs) throw openError(n, c);
        c.state = 'half_open';
      }
      const trial = c.state === 'half_open';
      if (trial) {
        if (c.trialRunning) throw openError(n, c);
        c.trialRunning = true;
      }
      let values: LuaValue[];
      try {
        values = await f.call();
      } catch (error) {
        c.failures++;
        if (trial || c.failures >= maxFailures) {
          c.state = 'open';
          c.openedAt = now();
        }
        if (trial) c.trialRunning = false;
        throw error;
      }
      if (trial) c.trialRunning = false;
      // A call started before the breaker opened may end after: its success does not close it.
      if (trial || c.state === 'closed') {
        c.state = 'closed';
        c.failures = 0;
      }
      return luaMultiple(...values);
    },

    circuit_state(_call, name) {
      const n = circuitName('circuit_state', name);
      const c = circuits.get(n);
      if (!c) return { state: 'closed', failures: 0 };
      if (c.state === 'open') {
        const left = c.resetMs - (now() - c.openedAt);
        // Due for a trial: the next call will be let through, which is what half-open means.
        if (left <= 0) return { state: 'half_open', failures: c.failures };
        return { state: 'open', failures: c.failures, retry_in: left / 1000 };
      }
      return { state: c.state, failures: c.failures };
    },

    async timeout(call, limit, fn) {
      if (limit === undefined || limit === null)
        throw new Error('reliability.timeout: argument 1 must be a duration, got nil');
      const ms = parseDurationArgument(limit, 'reliability.timeout: argument 1');
      const f = requireFunction('timeout', fn, 2);
      const running = f.call();
      // If the limit wins, the function's later error belongs to nobody: keep it from becoming an
      // unhandled rejection.
      running.catch(() => {});
      const controller = new AbortController();
      const onAbort = () => controller.abort();
      call.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const first = await Promise.race([
          running.then((values) => ({ values })),
          sleep(ms, controller.signal).then(
            () => 'timeout' as const,
            () => 'cancelled' as const,
          ),
        ]);
        if (first === 'timeout') throw new Error(`reliability.timeout: timed out after ${formatDuration(ms)}`);
        if (first === 'cancelled') throw new Error('reliability.timeout: cancelled');
        return luaMultiple(...first.values);
      } finally {
        call.signal.removeEventListener('abort', onAbort);
        controller.abort(); // clears the timer when the function won
      }
    },
  };
}
