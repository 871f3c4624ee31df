import { formatBytes } from '@runner/plugin-sdk';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full collection before a verdict is forced at most this often. */
const COLLECT_INTERVAL_MS = 1000;
let fullGc: (() => void) | undefined;
/** V8's `gc`, without --expose-gc on the command line: the flag then applies to new contexts. */
function collect(): void {
  if (fullGc === undefined) {
    setFlagsFromString('--expose-gc');
    fullGc = runInNewContext('gc') as () => void;
  }
  fullGc();
  // The buffers a collection freed leave V8's external-memory count only when the next one starts
  // (they are swept in the background): measured, a freed 512 MiB buffer was still counted after one.
  fullGc();
}

/**
 * The last line of defence against a script that grows without bound on the process's own heap
 * (tables and strings built step by step have no per-script account; see README, "Memory and long
 * calls"): once V8's heap and the external memory of its buffers (Lua strings) hold `ratio` of the
 * heap's limit, the script running at that moment, which is
 * what allocates while Lua runs, is stopped, rather than V8 ending the whole process (master or
 * agent) with a fatal out-of-memory error. Checked at the end of a time slice, at most every
 * `intervalMs` (a check costs about 5 us), so scripts that never use a whole slice never pay.
 */
export class HeapGuard {
  readonly ratio: number;
  readonly intervalMs: number;
  /** In a Lua worker: the script's memory limit, which the worker's heap and buffers must stay under. */
  readonly limitBytes: number | undefined;
  #next = 0;
  #nextCollect = 0;

  constructor(ratio: number, intervalMs = 20, limitBytes?: number) {
    this.ratio = ratio;
    this.intervalMs = intervalMs;
    this.limitBytes = limitBytes;
  }

  /** The reason to stop the running script, or null while the heap has room. */
  check(now: number): string | null {
    if (now < this.#next) return null;
    this.#next = now + this.intervalMs;
    const reason = this.#verdict(measure());
    // What V8 counts includes garbage not collected yet: a worker that ran a script which built a
    // 512 MiB string still held it when it ran the next one, a spinning script, and that one was
    // stopped for memory it never used (a CI run under load). A full collection goes first, at
    // most once a second: a script that is really over its limit stays over after it.
    if (reason === null || now < this.#nextCollect) return reason;
    this.#nextCollect = now + COLLECT_INTERVAL_MS;
    collect();
    return this.#verdict(measure());
  }

  #verdict({ used, limit }: { used: number; limit: number }): string | null {
    // A worker runs one script: all it holds is that script's, so the script's own limit applies.
    if (this.limitBytes !== undefined && used >= this.limitBytes)
      return `memory limit of ${formatBytes(this.limitBytes)} exceeded (the script's worker holds ${formatBytes(used)})`;
    if (used < limit * this.ratio) return null;
    return `not enough memory: the runner's heap holds ${formatBytes(used)} of its ${formatBytes(limit)} limit; the script was stopped to keep the runner up`;
  }
}

/** Lua strings are Uint8Arrays, whose bytes V8 counts as external memory, not heap: both count. */
function measure(): { used: number; limit: number } {
  const { used_heap_size: heap, external_memory: external, heap_size_limit: limit } = getHeapStatistics();
  return { used: heap + external, limit };
}
