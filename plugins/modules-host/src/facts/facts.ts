import { uptime } from 'node:os';
import type { LuaCallContext, LuaModuleImplementation, LuaValue } from '@runner/plugin-sdk';
import { FactCache } from './cache.js';
import { systemCollectors, type Collectors } from './collect.js';
import type { FactsFunction } from './spec.js';

/** How long a fact is reused: long enough that a script reading facts in a loop spawns no processes. */
export const FACTS_TTL_MS = 5_000;

export interface FactsOptions {
  ttlMs?: number;
  collectors?: Collectors;
  now?: () => number;
}

/** The implementation of the `facts` module; loaded by setup, so `runner --help` never imports it. */
export function createFactsModule(options: FactsOptions = {}): LuaModuleImplementation<FactsFunction> {
  const collectors = options.collectors ?? systemCollectors;
  const cache = new FactCache(options.ttlMs ?? FACTS_TTL_MS, options.now);
  const read = {
    // Uptime is read live: it is cheap, and a cached one would be visibly wrong.
    host: async () => ({ ...(await cache.get('host', () => collectors.host())), uptime: Math.floor(uptime()) }),
    cpu: () => cache.get('cpu', () => collectors.cpu()),
    memory: () => cache.get('memory', () => collectors.memory()),
    disks: () => cache.get('disks', () => collectors.disks()),
    network: () => cache.get('network', () => collectors.network()),
  };
  const answer = (fn: FactsFunction, call: LuaCallContext, value: Promise<unknown>): Promise<LuaValue> =>
    untilAborted(fn, call.signal, value) as Promise<LuaValue>;
  return {
    host: (call) => answer('host', call, read.host()),
    cpu: (call) => answer('cpu', call, read.cpu()),
    memory: (call) => answer('memory', call, read.memory()),
    disks: (call) => answer('disks', call, read.disks()),
    network: (call) => answer('network', call, read.network()),
    all: (call) =>
      answer(
        'all',
        call,
        Promise.all([read.host(), read.cpu(), read.memory(), read.disks(), read.network()]).then(
          ([host, cpu, memory, disks, network]) => ({ host, cpu, memory, disks, network }),
        ),
      ),
  };
}

/**
 * The read goes on (and fills the cache) when the task is cancelled; only the script stops waiting,
 * since systeminformation's child processes cannot be stopped from here.
 */
function untilAborted<T>(fn: FactsFunction, signal: AbortSignal, value: Promise<T>): Promise<T> {
  const stopped = (): Error => {
    const reason = signal.reason;
    const why = reason instanceof Error ? reason.message : reason === undefined ? 'aborted' : String(reason);
    return new Error(`facts.${fn}: cancelled (${why})`, { cause: reason });
  };
  if (signal.aborted) return Promise.reject(stopped());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(stopped());
    signal.addEventListener('abort', onAbort, { once: true });
    value.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(new Error(`facts.${fn}: ${(error as Error)?.message ?? String(error)}`, { cause: error }));
      },
    );
  });
}
