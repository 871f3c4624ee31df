import type { RunProgress, RunRecord, TaskResult, TaskStatus } from '@runner/plugin-sdk';

export interface RunView {
  observe(progress: RunProgress): void;
  /** Prints the summary; the view is done after this. */
  finish(record: RunRecord): void;
}

type Summary = Omit<TaskResult, 'log'>;

const ICON: Record<TaskStatus, string> = { pending: '·', running: '▸', succeeded: '✔', failed: '✖', skipped: '↷', ignored: '!' };
const COLOUR: Record<TaskStatus, string> = { pending: '90', running: '36', succeeded: '32', failed: '31', skipped: '90', ignored: '33' };
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const seconds = (s: number) => (s < 10 ? `${s.toFixed(2)}s` : `${s.toFixed(1)}s`);

/**
 * How `runner run` shows a run: `live` redraws a block of task lines in place (a terminal),
 * `text` prints a line as each task ends (a pipe or a CI log), `json` prints every progress
 * event as one JSON object a line, then the record.
 */
export function createRunView(options: { mode: 'live' | 'text' | 'json'; out: NodeJS.WritableStream; verbose: boolean }): RunView {
  const { out, mode, verbose } = options;
  if (mode === 'json') {
    return {
      observe: (p) => {
        if (p.kind === 'log' && !verbose) return;
        out.write(`${JSON.stringify(p.kind === 'run' ? { type: 'run', ...p.run } : p.kind === 'task' ? { type: 'task', run_id: p.runId, ...p.task } : { type: 'log', run_id: p.runId, task: p.task, ...p.line })}\n`);
      },
      finish: (record) => out.write(`${JSON.stringify({ type: 'summary', id: record.id, workflow: record.workflowName, status: record.status, duration: record.duration, counts: record.counts, error: record.error })}\n`),
    };
  }

  const paint = (status: TaskStatus, text: string) => (mode === 'live' ? `\x1b[${COLOUR[status]}m${text}\x1b[0m` : text);
  const line = (t: Summary, frame = 0) => {
    const icon = t.status === 'running' && mode === 'live' ? SPINNER[frame % SPINNER.length] : ICON[t.status];
    const time = t.status === 'running' ? seconds((Date.now() - Date.parse(t.startedAt ?? new Date().toISOString())) / 1000) : t.status === 'skipped' ? '' : seconds(t.duration);
    const where = t.agent !== 'localhost' ? ` on ${t.agent}` : '';
    const attempts = t.attempts > 1 ? ` (attempt ${t.attempts})` : '';
    return `${paint(t.status, icon)} ${t.name}${where}${attempts}${time ? `  ${time}` : ''}${t.message ? `  ${t.message}` : ''}`;
  };

  const summaryLine = (record: RunRecord) => {
    const counts = Object.entries(record.counts)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ');
    const status = record.status === 'succeeded' ? 'succeeded' : record.status === 'failed' ? 'failed' : 'cancelled';
    const mark = paint(record.status === 'succeeded' ? 'succeeded' : 'failed', record.status === 'succeeded' ? '✔' : '✖');
    return `${mark} ${record.workflowName} ${status} in ${seconds(record.duration)}: ${counts || 'no tasks'}${record.dryRun ? ' (dry run)' : ''}  [run ${record.id}]${record.error ? `\n  ${record.error}` : ''}\n`;
  };

  if (mode === 'text') {
    return {
      observe: (p) => {
        if (p.kind === 'task' && p.task.status !== 'running') out.write(`${line(p.task)}\n`);
        if (p.kind === 'log' && verbose) out.write(`  ${p.task} | ${p.line.level === 'info' ? '' : `${p.line.level}: `}${p.line.message}\n`);
      },
      finish: (record) => out.write(summaryLine(record)),
    };
  }

  // Live: finished tasks scroll away above; running tasks are redrawn in place below them.
  const running = new Map<string, Summary>();
  let drawn = 0;
  let frame = 0;
  const clear = () => {
    if (drawn > 0) out.write(`\x1b[${drawn}A\x1b[J`);
    drawn = 0;
  };
  const draw = () => {
    clear();
    for (const t of running.values()) out.write(`${line(t, frame)}\n`);
    drawn = running.size;
  };
  const timer = setInterval(() => {
    frame++;
    draw();
  }, 80);
  timer.unref();
  return {
    observe: (p) => {
      if (p.kind === 'task') {
        if (p.task.status === 'running') running.set(p.task.name, p.task);
        else {
          running.delete(p.task.name);
          clear();
          out.write(`${line(p.task)}\n`);
        }
        draw();
      } else if (p.kind === 'log' && verbose) {
        clear();
        out.write(`\x1b[90m  ${p.task} |\x1b[0m ${p.line.message}\n`);
        draw();
      }
    },
    finish: (record) => {
      clearInterval(timer);
      running.clear();
      clear();
      out.write(summaryLine(record));
    },
  };
}
