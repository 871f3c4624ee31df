import { open, readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];

/** One line of runner.log as the API answers it: the JSON line's own keys, context in `fields`. */
export interface LogEntry {
  timestamp: string;
  level: Level;
  message: string;
  fields?: Record<string, unknown>;
}

export interface LogQuery {
  /** Lowest level shown. */
  level?: Level;
  /** Milliseconds since the epoch: entries at or after. */
  sinceMs?: number;
  /** Most recent entries kept. */
  limit: number;
}

const rank = (level: string): number => LEVELS.indexOf(level as Level);

/** A JSON line of the log file, or undefined for a partial or foreign line. */
export function parseLine(line: string): LogEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const { timestamp, level, message, ...fields } = JSON.parse(line) as Record<string, unknown>;
    if (typeof timestamp !== 'string' || typeof level !== 'string' || rank(level) < 0) return undefined;
    const entry: LogEntry = { timestamp, level: level as Level, message: String(message ?? '') };
    if (Object.keys(fields).length > 0) entry.fields = fields;
    return entry;
  } catch {
    return undefined;
  }
}

export function matches(entry: LogEntry, query: Omit<LogQuery, 'limit'>): boolean {
  if (query.level && rank(entry.level) < rank(query.level)) return false;
  if (query.sinceMs !== undefined && Date.parse(entry.timestamp) < query.sinceMs) return false;
  return true;
}

/**
 * The latest `limit` entries matching the query, oldest first, from the rotated file and the
 * current one (the kernel keeps one previous file, rotated at 10 MiB). Lines are already redacted:
 * the kernel's logger masks secrets before they reach the file.
 */
export async function readEntries(
  files: string[],
  query: LogQuery,
): Promise<{ entries: LogEntry[]; truncated: boolean }> {
  const kept: LogEntry[] = [];
  let dropped = false;
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    for (const line of text.split('\n')) {
      const entry = parseLine(line);
      if (!entry || !matches(entry, query)) continue;
      kept.push(entry);
      // Trim in batches: a 10 MiB file must not be held twice as entries.
      if (kept.length > query.limit * 2) {
        kept.splice(0, kept.length - query.limit);
        dropped = true;
      }
    }
  }
  if (kept.length > query.limit) {
    kept.splice(0, kept.length - query.limit);
    dropped = true;
  }
  return { entries: kept, truncated: dropped };
}

/**
 * Follows the file from its current end, handing each new complete line's entry to `onEntry`
 * until `signal` aborts. The size is polled (`intervalMs`): file-system watchers miss writes on
 * some systems and lose the file on rotation, after which the new file is read from its start.
 */
export async function follow(
  file: string,
  onEntry: (entry: LogEntry) => void,
  signal: AbortSignal,
  intervalMs = 500,
): Promise<void> {
  let position = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  let partial = '';
  while (!signal.aborted) {
    await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    if (size < position) {
      position = 0;
      partial = '';
    }
    if (size === position) continue;
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(size - position);
      await handle.read(buffer, 0, buffer.length, position);
      position = size;
      const lines = (partial + buffer.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const entry = parseLine(line);
        if (entry) onEntry(entry);
      }
    } finally {
      await handle.close();
    }
  }
}
