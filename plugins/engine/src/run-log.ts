import type { Redactor, RunRecord, TaskLogLine } from '@runner/plugin-sdk';

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
  units: { task: string; agent: string; log: TaskLogLine[] }[];
  /** starts[i]: position of unit i's first line; the last entry is the total. */
  starts: number[];
}

function indexRun(run: RunRecord): Indexed {
  const starts = [0];
  const units = run.tasks.map((t) => ({ task: t.name, agent: t.agent, log: t.log }));
  for (const unit of units) starts.push(starts[starts.length - 1] + unit.log.length);
  return { units, starts };
}

/** A line's text for search and the text download: message, then fields as JSON. */
function lineText(line: TaskLogLine): string {
  return line.fields && Object.keys(line.fields).length
    ? `${line.message} ${JSON.stringify(line.fields)}`
    : line.message;
}

/** Runs whose log was read last, ended ones only: scrolling up reads the same run again and again. */
const CACHED_RUNS = 4;

export class RunLogReader {
  private readonly ended = new Map<string, Indexed>();

  constructor(
    /** The whole record with its logs (the engine's `get`). */
    private readonly getRun: (runId: string) => RunRecord | undefined,
    private readonly redactor?: Redactor,
  ) {}

  private index(runId: string): { run: RunRecord | undefined; indexed?: Indexed } {
    const cached = this.ended.get(runId);
    if (cached) {
      // Most recently used last.
      this.ended.delete(runId);
      this.ended.set(runId, cached);
      return { run: undefined, indexed: cached };
    }
    const run = this.getRun(runId);
    if (!run) return { run: undefined };
    const indexed = indexRun(run);
    if (run.status !== 'running') {
      this.ended.set(runId, indexed);
      if (this.ended.size > CACHED_RUNS) this.ended.delete(this.ended.keys().next().value as string);
    }
    return { run, indexed };
  }

  /** A page of the log, or undefined when no run has that id. */
  page(runId: string, query: LogQuery): LogPage | undefined {
    const { indexed } = this.index(runId);
    if (!indexed) return undefined;
    const { units, starts } = indexed;
    const total = starts[starts.length - 1];
    const before = Math.min(query.before ?? total, total);
    const needle = query.q?.toLowerCase();
    const unitMatches = (u: Indexed['units'][number]) =>
      (query.task === undefined || u.task === query.task) && (query.agent === undefined || u.agent === query.agent);
    const lineMatches = (line: TaskLogLine) => needle === undefined || lineText(line).toLowerCase().includes(needle);
    const filtered = needle !== undefined || query.task !== undefined || query.agent !== undefined;

    // Walk back from `before` collecting up to `tail` matches, then on to find whether more exist.
    const picked: LogPageLine[] = [];
    let older: number | undefined;
    for (let u = units.length - 1; u >= 0 && older === undefined; u--) {
      const unit = units[u];
      if (starts[u] >= before || !unitMatches(unit)) continue;
      for (let i = Math.min(unit.log.length, before - starts[u]) - 1; i >= 0; i--) {
        const line = unit.log[i];
        if (!lineMatches(line)) continue;
        const n = starts[u] + i;
        if (picked.length === query.tail) {
          older = picked[picked.length - 1].n;
          break;
        }
        picked.push({ n, task: unit.task, agent: unit.agent, ...line });
      }
    }
    let matched = total;
    if (filtered) {
      matched = 0;
      for (const unit of units) {
        if (!unitMatches(unit)) continue;
        if (needle === undefined) matched += unit.log.length;
        else for (const line of unit.log) if (lineMatches(line)) matched++;
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
  text(runId: string, filter: Omit<LogQuery, 'tail' | 'before'>): Iterable<string> | undefined {
    const { indexed } = this.index(runId);
    if (!indexed) return undefined;
    const { redactor } = this;
    const needle = filter.q?.toLowerCase();
    return (function* () {
      let chunk = '';
      for (const unit of indexed.units) {
        if (filter.task !== undefined && unit.task !== filter.task) continue;
        if (filter.agent !== undefined && unit.agent !== filter.agent) continue;
        for (const line of unit.log) {
          const shown = redactor && line.fields ? { ...line, fields: redactor.redact(line.fields) } : line;
          const text = lineText(shown);
          if (needle !== undefined && !text.toLowerCase().includes(needle)) continue;
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
