import type { TaskLogLine } from '@runner/plugin-sdk';

/**
 * One unit's log lines as the run log reader reads them: by position, or all at once (a search,
 * the download).
 */
export interface LogUnit {
  task: string;
  agent: string;
  count: number;
  line(i: number): TaskLogLine;
  lines(): readonly TaskLogLine[];
}

export function arrayUnit(task: string, agent: string, log: readonly TaskLogLine[]): LogUnit {
  return { task, agent, count: log.length, line: (i) => log[i], lines: () => log };
}

const LINE_START = '{"timestamp":"';

/**
 * Where each line's object starts in a stored log (the JSON text of the array), found without
 * parsing it: a 300,000-line log is 28 MB, which JSON.parse takes most of a second to read, while
 * finding the starts takes a few tens of ms. Every line is written with `timestamp` first
 * (task-log.ts, retention's note), and a quote inside a string is escaped, so `{"timestamp":"`
 * after `[` or `},` begins a line. Undefined when the text does not look like that (then it is
 * parsed whole): a line written otherwise, or a list of such objects inside a line's fields (a
 * list whose later objects alone start so would still be taken for lines: fields do not hold
 * log lines in practice).
 */
function lineStarts(text: string): number[] | undefined {
  if (text === '[]') return [];
  if (!text.startsWith(`[${LINE_START}`)) return undefined;
  const starts: number[] = [];
  for (let at = 1; at !== -1; at = text.indexOf(LINE_START, at + 1)) {
    if (at > 1) {
      const before = text.charCodeAt(at - 1);
      // `[` before it: a list of such objects inside a line's fields. Parse it all instead.
      if (before === 91) return undefined;
      // Not after `},`: an object inside a line's fields (after `:` or in a list).
      if (before !== 44 || text.charCodeAt(at - 2) !== 125) continue;
    }
    starts.push(at);
  }
  return starts;
}

/**
 * A unit whose stored log text is parsed only where it is read: a page parses its lines alone;
 * a search or the download parses the whole text once.
 */
export function textUnit(task: string, agent: string, text: string): LogUnit {
  const starts = lineStarts(text);
  if (starts === undefined) return arrayUnit(task, agent, JSON.parse(text) as TaskLogLine[]);
  let all: TaskLogLine[] | undefined;
  const lines = () => (all ??= JSON.parse(text) as TaskLogLine[]);
  return {
    task,
    agent,
    count: starts.length,
    line(i) {
      if (all) return all[i];
      const end = i + 1 < starts.length ? starts[i + 1] - 1 : text.length - 1;
      try {
        return JSON.parse(text.slice(starts[i], end)) as TaskLogLine;
      } catch {
        // Not one object after all (see lineStarts): read the whole text.
        return lines()[i];
      }
    },
    lines,
  };
}
