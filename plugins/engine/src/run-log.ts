import type { Redactor, RunRecord, TaskLogLine } from '@runner/plugin-sdk';
import { arrayUnit, textUnit, type LogUnit } from './log-units.js';
import type { LogOrder } from './log-followers.js';

/**
 * A run's log as one sequence of lines over its units, in the order they were written (during the
 * run and after it alike), read in pages from the tail: the run view shows the last lines first
 * and asks for older ones as it is scrolled up, instead of the whole record at once (a
 * 300,000-line record is 28 MB of JSON).
 *
 * A line's position in that sequence is its cursor: `before=<n>` asks for lines before position
 * n, and is the `seq` the live stream gives the line. Positions of an ended run never change; a
 * running run's grow at the end (on the master that runs it; a page read through another master
 * has the units in the run's order until the run ends).
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

/**
 * The units of a run and, for each position of the whole log, the unit and the line of it there:
 * the lines in the order they were written (the runs' `LogOrder`), else (runs recorded before it
 * was kept) unit after unit in the run's order.
 */
interface Indexed {
  units: LogUnit[];
  /** unitAt[n]: the index in `units` of the line at position n. */
  unitAt: Uint32Array;
  /** lineAt[n]: that line's index in its unit. */
  lineAt: Uint32Array;
}

/**
 * Positions from the write order. The order never claims more of a unit than it holds (a page of
 * a running run reads the units a moment before the order; retention may empty a unit's log);
 * lines the order does not cover follow at the end, unit after unit.
 */
export function indexUnits(units: LogUnit[], order?: LogOrder): Indexed {
  const total = units.reduce((sum, unit) => sum + unit.count, 0);
  const unitAt = new Uint32Array(total);
  const lineAt = new Uint32Array(total);
  const next = new Array<number>(units.length).fill(0);
  let n = 0;
  const place = (u: number) => {
    unitAt[n] = u;
    lineAt[n++] = next[u]++;
  };
  if (order) {
    // A unit name and agent name one unit; the queue takes the next should two share them.
    const byKey = new Map<string, number[]>();
    units.forEach((unit, u) => {
      const key = `${unit.task}\u0000${unit.agent}`;
      byKey.set(key, [...(byKey.get(key) ?? []), u]);
    });
    for (const [task, agent, lines] of order) {
      const queue = byKey.get(`${task}\u0000${agent}`);
      for (let c = 0; c < lines && queue && queue.length > 0; c++) {
        while (queue.length > 0 && next[queue[0]] >= units[queue[0]].count) queue.shift();
        if (queue.length > 0) place(queue[0]);
      }
    }
  }
  units.forEach((unit, u) => {
    while (next[u] < unit.count) place(u);
  });
  return { units, unitAt, lineAt };
}

/** An ended run's logs as stored, unparsed, in the run's order, and the order they were written in. */
export type StoredLogs = (
  runId: string,
) => Promise<{ units: { name: string; agent: string; log: string }[]; order?: LogOrder }>;

/** Where the reader finds the write order: the store for an ended run, the engine for a running one. */
export interface LogSources {
  stored: StoredLogs;
  live(runId: string): LogOrder | undefined;
}

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
    /** An ended run's logs as stored (parsed only where a page reads them), and the write order. */
    private readonly sources?: LogSources,
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
    if (summary.status === 'running' || !this.sources) {
      const run = await this.getRun(runId);
      if (!run) return undefined;
      const order = run.status === 'running' ? this.sources?.live(runId) : undefined;
      const indexed = indexUnits(
        run.tasks.map((t) => arrayUnit(t.name, t.agent, t.log)),
        order,
      );
      if (run.status !== 'running') this.keep(runId, indexed);
      return indexed;
    }
    const stored = await this.sources.stored(runId);
    const indexed = indexUnits(
      stored.units.map((t) => textUnit(t.name, t.agent, t.log)),
      stored.order,
    );
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
    const { units, unitAt, lineAt } = indexed;
    const total = unitAt.length;
    const before = Math.min(query.before ?? total, total);
    const needle = query.q?.toLowerCase();
    const { level } = query;
    // A search or a level reads every line of a unit; a page without either parses only its own.
    const searching = needle !== undefined || level !== undefined;
    const wanted = units.map(
      (u) =>
        (query.task === undefined || u.task === query.task) && (query.agent === undefined || u.agent === query.agent),
    );
    const filtered = searching || query.task !== undefined || query.agent !== undefined;
    const hits = searching ? units.map((u, i) => (wanted[i] ? this.hits(u, needle, level) : undefined)) : undefined;

    // Walk back from `before` collecting up to `tail` matches, then on to find whether more exist.
    const picked: LogPageLine[] = [];
    let older: number | undefined;
    for (let n = before - 1; n >= 0; n--) {
      const u = unitAt[n];
      const i = lineAt[n];
      if (!wanted[u] || (hits && hits[u]![i] === 0)) continue;
      if (picked.length === query.tail) {
        older = picked[picked.length - 1].n;
        break;
      }
      const unit = units[u];
      picked.push({ n, task: unit.task, agent: unit.agent, ...(searching ? unit.lines()[i] : unit.line(i)) });
    }
    let matched = total;
    if (filtered) {
      matched = 0;
      units.forEach((unit, u) => {
        if (!wanted[u]) return;
        if (!hits) matched += unit.count;
        else for (const hit of hits[u]!) matched += hit;
      });
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
      const { units, unitAt, lineAt } = indexed;
      for (let n = 0; n < unitAt.length; n++) {
        const unit = units[unitAt[n]];
        if (filter.task !== undefined && unit.task !== filter.task) continue;
        if (filter.agent !== undefined && unit.agent !== filter.agent) continue;
        const line = unit.lines()[lineAt[n]];
        const shown = redactor && line.fields ? { ...line, fields: redactor.redact(line.fields) } : line;
        if (!lineWanted(shown, needle, filter.level)) continue;
        chunk += `${line.timestamp} ${line.level.toUpperCase()} [${unit.task}@${unit.agent}] ${lineText(shown)}\n`;
        if (chunk.length >= 64 * 1024) {
          yield redactor ? redactor.redactText(chunk) : chunk;
          chunk = '';
        }
      }
      if (chunk) yield redactor ? redactor.redactText(chunk) : chunk;
    })();
  }
}
