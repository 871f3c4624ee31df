import { createHash } from 'node:crypto';
import type { ParsedWorkflow } from '@runner/plugin-sdk';

/** Parsed workflows kept (the scheduler starting 1,000 jobs of a few files reuses a handful). */
const DEFAULT_ENTRIES = 64;

/**
 * The workflows already parsed and validated, by their text and the name problems are reported
 * at: starting the same text again (a schedule, a hook, run again) skips YAML, validation and the
 * compile of every script, the largest part of a trivial run's start. Keyed by content, not by
 * file and mtime, so an edited file is parsed again at once; only texts that parsed are kept (a
 * bad one throws its problems every time). Entries are deep-frozen: runs share them, and a
 * change to one would leak into every later run of that text.
 */
export class ParseCache {
  private readonly entries = new Map<string, ParsedWorkflow>();

  constructor(private readonly limit = DEFAULT_ENTRIES) {}

  /** The parsed `text` (reported as `file`), from `parse` on the first call. */
  get(text: string, file: string, parse: () => ParsedWorkflow): ParsedWorkflow {
    const key = createHash('sha256').update(file).update('\0').update(text).digest('base64');
    const known = this.entries.get(key);
    if (known) {
      // Least recently used goes first: a hit moves to the end.
      this.entries.delete(key);
      this.entries.set(key, known);
      return known;
    }
    const parsed = deepFreeze(parse());
    this.entries.set(key, parsed);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
    return parsed;
  }

  get size(): number {
    return this.entries.size;
  }
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<string | symbol, unknown>)[key]);
  return value;
}
