import type { Redactor, RunRecord, TaskLogLine } from '@runner/plugin-sdk';
import { arrayUnit, textUnit, type LogUnit } from './log-units.js';

/**
 * A run's log as one sequence of lines over its units (in the order the run lists them, each
 * unit's lines in order), read in pages from the tail: the run view shows the last lines first
 * and asks for older ones as it is scrolled up, instead of the whole record at once (a
 * 300,000-line record is 28 MB of JSON).
 *
 * A line's position in that sequence is its cursor: `before=<n>` asks for lines before position
 * n. Positions of an ended run never change; while a run goes on, a unit listed before another
 * may still add lines, so a client following a running run reads the tail again rather than
 * what follows a position.
 */
export interface LogQuery {
  /** Lines to answer (the last ones before `before`). */
  tail: number;
  /** Only lines before this position (default: the end). */
  before?: number;
  /** Only lines of units of this task. */
  task?: string;
  /** Only lines of units on this agent. */
  agent?: string;
  /** Only lines whose text (message and fields) contains this, ignoring case. */
  q?: string;
  /** Only lines at this level and above. */
  level?: TaskLogLine['level'];
}

const RANK: Record<TaskLogLine['level'], number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Whether a line passes the text and level filters (`needle` in lower case). */
function lineWanted(line: TaskLogLine, needle: string | undefined, level: TaskLogLine['level'] | undefined): boolean {
  if (level !== undefined && RANK[line.level] < RANK[level]) return false;
  return needle === undefined || lineText(line).toLowerCase().includes(needle);
}

export interface LogPageLine {
  /** Position in the run's log: the cursor. */
  n: number;
  task: string;
  agent: string;
  timestamp: string;
  level: TaskLogLine['level'];
  message: string;
  fields?: Record<string, unknown>;
}

export interface LogPage {
  lines: LogPageLine[];
  /** Lines in the run's log. */
  total: number;
  /** Lines matching the filters (all of them when none is given). */
  matched: number;
  /** The `before` cursor of the page before this one; absent when this page holds the first match. */
  older?: number;
  /** Task names and agents of the run, for filters. */
  tasks: string[];
  agents: string[];
}

/** The units of a run with where each one's lines start in the whole log. */
interface Indexed {
  units: LogUnit[];
  /** starts[i]: position of unit i's first line; the last entry is the total. */
  starts: number[];
}

function indexUnits(units: LogUnit[]): Indexed {
  const starts = [0];
  for (const unit of units) starts.push(starts[starts.length - 1] + unit.count);
  return { units, starts };
}

/** Each unit's stored log, unparsed, in the run's order (ended runs: every unit is written). */
export type StoredLogs = (runId: string) => Promise<{ name: string; agent: string; log: string }[]>;

/** A line's text for search and the text download: message, then fields as JSON. */
function lineText(line: TaskLogLine): string {
  return line.fields && Object.keys(line.fields).length
    ? `${line.message} ${JSON.stringify(line.fields)}`
    : line.message;
}

/** Whether a line of unit `task` on `agent` passes a page's filters (the live stream applies them too). */
export function lineMatches(
  filter: Omit<LogQuery, 'tail' | 'before'>,
  task: string,
  agent: string,
  line: TaskLogLine,
): boolean {
  if (filter.task !== undefined && task !== filter.task) return false;
  if (filter.agent !== undefined && agent !== filter.agent) return false;
  return lineWanted(line, filter.q?.toLowerCase(), filter.level);
}

/** Runs whose log was read last, ended ones only: scrolling up reads the same run again and again. */
const CACHED_RUNS = 4;

export class RunLogReader {
  private readonly ended = new Map<string, Indexed>();
  private readonly searches = new WeakMap<LogUnit, { key: string; hits: Uint8Array }>();

  constructor(
    /** The run (the engine's `get`): without logs to know whether it ended, with them while it runs. */
    private readonly getRun: (runId: string, options?: { log?: boolean }) => Promise<RunRecord | undefined>,
    private readonly redactor?: Redactor,
    /** An ended run's logs as stored, parsed only where a page reads them. */
    private readonly storedLogs?: StoredLogs,
  ) {}

  private async index(runId: string): Promise<Indexed | undefined> {
    const cached = this.ended.get(runId);
    if (cached) {
      // Most recently used last.
      this.ended.delete(runId);
      this.ended.set(runId, cached);
      return cached;
    }
    const summary = await this.getRun(runId, { log: false });
    if (!summary) return undefined;
    if (summary.status === 'running' || !this.storedLogs) {
      const run = await this.getRun(runId);
      if (!run) return undefined;
      const indexed = indexUnits(run.tasks.map((t) => arrayUnit(t.name, t.agent, t.log)));
      if (run.status !== 'running') this.keep(runId, indexed);
      return indexed;
    }
    const indexed = indexUnits((await this.storedLogs(runId)).map((t) => textUnit(t.name, t.agent, t.log)));
    this.keep(runId, indexed);
    return indexed;
  }

  /**
   * Which of a unit's lines contain `needle` (lower case) at `level` and above: kept for the
   * unit's last search, which its older pages repeat.
   */
  private hits(unit: LogUnit, needle: string | undefined, level: TaskLogLine['level'] | undefined): Uint8Array {
    const key = `${level ?? ''}\u0000${needle ?? ''}`;
    const last = this.searches.get(unit);
    if (last?.key === key) return last.hits;
    const lines = unit.lines();
    const hits = new Uint8Array(lines.length);
    for (let i = 0; i < lines.length; i++) hits[i] = lineWanted(lines[i], needle, level) ? 1 : 0;
    this.searches.set(unit, { key, hits });
    return hits;
  }

  private keep(runId: string, indexed: Indexed): void {
    this.ended.set(runId, indexed);
    if (this.ended.size > CACHED_RUNS) this.ended.delete(this.ended.keys().next().value as string);
  }

  /** A page of the log, or undefined when no run has that id. */
  async page(runId: string, query: LogQuery): Promise<LogPage | undefined> {
    const indexed = await this.index(runId);
    if (!indexed) return undefined;
    const { units, starts } = indexed;
    const total = starts[starts.length - 1];
    const before = Math.min(query.before ?? total, total);
    const needle = query.q?.toLowerCase();
    const { level } = query;
    // A search or a level reads every line of a unit; a page without either parses only its own.
    const searching = needle !== undefined || level !== undefined;
    const unitMatches = (u: Indexed['units'][number]) =>
      (query.task === undefined || u.task === query.task) && (query.agent === undefined || u.agent === query.agent);
    const filtered = searching || query.task !== undefined || query.agent !== undefined;

    // Walk back from `before` collecting up to `tail` matches, then on to find whether more exist.
    const picked: LogPageLine[] = [];
    let older: number | undefined;
    for (let u = units.length - 1; u >= 0 && older === undefined; u--) {
      const unit = units[u];
      if (starts[u] >= before || !unitMatches(unit)) continue;
      const all = searching ? unit.lines() : undefined;
      const hits = searching ? this.hits(unit, needle, level) : undefined;
      for (let i = Math.min(unit.count, before - starts[u]) - 1; i >= 0; i--) {
        if (hits && hits[i] === 0) continue;
        const n = starts[u] + i;
        if (picked.length === query.tail) {
          older = picked[picked.length - 1].n;
          break;
        }
        picked.push({ n, task: unit.task, agent: unit.agent, ...(all ? all[i] : unit.line(i)) });
      }
    }
    let matched = total;
    if (filtered) {
      matched = 0;
      for (const unit of units) {
        if (!unitMatches(unit)) continue;
        if (!searching) matched += unit.count;
        else for (const hit of this.hits(unit, needle, level)) matched += hit;
      }
    }
    const { redactor } = this;
    const lines = picked.reverse();
    return {
      // The router masks secret values in the answer; fields under secret-looking keys are masked here.
      lines: redactor ? lines.map((l) => (l.fields ? { ...l, fields: redactor.redact(l.fields) } : l)) : lines,
      total,
      matched,
      ...(older === undefined ? {} : { older }),
      tasks: [...new Set(units.map((u) => u.task))],
      agents: [...new Set(units.map((u) => u.agent))].sort(),
    };
  }

  /**
   * The whole log (filtered like a page) as text lines, `timestamp LEVEL [task@agent] message
   * {fields}`, secrets masked, in chunks for a streamed download; undefined when no run has that id.
   */
  async text(runId: string, filter: Omit<LogQuery, 'tail' | 'before'>): Promise<Iterable<string> | undefined> {
    const indexed = await this.index(runId);
    if (!indexed) return undefined;
    const { redactor } = this;
    const needle = filter.q?.toLowerCase();
    return (function* () {
      let chunk = '';
      for (const unit of indexed.units) {
        if (filter.task !== undefined && unit.task !== filter.task) continue;
        if (filter.agent !== undefined && unit.agent !== filter.agent) continue;
        for (const line of unit.lines()) {
          const shown = redactor && line.fields ? { ...line, fields: redactor.redact(line.fields) } : line;
          if (!lineWanted(shown, needle, filter.level)) continue;
          const text = lineText(shown);
          chunk += `${line.timestamp} ${line.level.toUpperCase()} [${unit.task}@${unit.agent}] ${text}\n`;
          if (chunk.length >= 64 * 1024) {
            yield redactor ? redactor.redactText(chunk) : chunk;
            chunk = '';
          }
        }
      }
      if (chunk) yield redactor ? redactor.redactText(chunk) : chunk;
    })();
  }
}
