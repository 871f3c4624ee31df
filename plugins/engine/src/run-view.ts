import type { CommandContext, Redactor, RunProgress, RunRecord, TaskResult, TaskStatus } from '@runner/plugin-sdk';
import { runToApi, taskToApi } from './api-shape.js';

export interface RunView {
  observe(progress: RunProgress): void;
  /** Prints the summary; the view is done after this. */
  finish(record: RunRecord): void;
}

type Summary = Omit<TaskResult, 'log'>;

const ICON: Record<TaskStatus, string> = {
  pending: '·',
  running: '▸',
  succeeded: '✔',
  failed: '✖',
  cancelled: '■',
  skipped: '↷',
  ignored: '!',
};
const COLOUR: Record<TaskStatus, string> = {
  pending: '90',
  running: '36',
  succeeded: '32',
  failed: '31',
  cancelled: '33',
  skipped: '90',
  ignored: '33',
};
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const seconds = (s: number) => (s < 10 ? `${s.toFixed(2)}s` : `${s.toFixed(1)}s`);

/**
 * How `runner run` shows a run: `live` redraws a block of task lines in place (a terminal),
 * `text` prints a line as each task ends (a pipe or a CI log), `json` prints every progress
 * event as one JSON object a line, then the record.
 */
/**
 * The view `runner run` shows, embedded or through a master: JSON lines with `--output json`, the
 * redrawn live block on a terminal, plain lines otherwise; colours unless NO_COLOR is set.
 */
export function runViewFor(ctx: CommandContext, options: { output?: string; verbose?: boolean }): RunView {
  return createRunView({
    mode: options.output === 'json' ? 'json' : ctx.isTTY ? 'live' : 'text',
    out: ctx.stdout,
    err: ctx.stderr,
    verbose: options.verbose === true,
    colour: !process.env.NO_COLOR,
    redactor: ctx.redactor,
  });
}

export function createRunView(options: {
  mode: 'live' | 'text' | 'json';
  out: NodeJS.WritableStream;
  /** The terminal's other stream (stderr), which the live view keeps out of its redrawn block. */
  err?: NodeJS.WritableStream & { isTTY?: boolean };
  verbose: boolean;
  /** Colours in the live view; false when NO_COLOR is set (no-color.org). Default true. */
  colour?: boolean;
  /** The process's redactor: progress reaches the terminal straight from the engine, so it is masked here. */
  redactor: Redactor;
}): RunView {
  const view = createPlainRunView(options);
  const { redactor } = options;
  return {
    observe: (p) => view.observe(redactor.redact(p)),
    finish: (record) => view.finish(redactor.redact(record)),
  };
}

function createPlainRunView(options: Parameters<typeof createRunView>[0]): RunView {
  const { out, mode, verbose } = options;
  if (mode === 'json') {
    return {
      observe: (p) => {
        if (p.kind === 'log' && !verbose) return;
        // The shapes of the REST API (snake_case), so one parser reads both.
        const object =
          p.kind === 'run'
            ? { type: 'run', ...runToApi(p.run) }
            : p.kind === 'task'
              ? { type: 'task', run_id: p.runId, ...taskToApi(p.task) }
              : { type: 'log', run_id: p.runId, task: p.task, ...p.line };
        out.write(`${JSON.stringify(object)}\n`);
      },
      finish: (record) =>
        out.write(
          `${JSON.stringify({ type: 'summary', id: record.id, workflow_name: record.workflowName, status: record.status, dry_run: record.dryRun, duration: record.duration, counts: record.counts, error: record.error })}\n`,
        ),
    };
  }

  const colour = mode === 'live' && options.colour !== false;
  const paint = (status: TaskStatus, text: string) => (colour ? `\x1b[${COLOUR[status]}m${text}\x1b[0m` : text);
  const line = (t: Summary, frame = 0) => {
    const icon = t.status === 'running' && mode === 'live' ? SPINNER[frame % SPINNER.length] : ICON[t.status];
    const time =
      t.status === 'running'
        ? seconds((Date.now() - Date.parse(t.startedAt ?? new Date().toISOString())) / 1000)
        : t.status === 'skipped'
          ? ''
          : seconds(t.duration);
    const where = t.agent !== 'localhost' ? ` on ${t.agent}` : '';
    const attempts = t.attempts > 1 ? ` (attempt ${t.attempts})` : '';
    return `${paint(t.status, icon)} ${t.name}${where}${attempts}${time ? `  ${time}` : ''}${t.message ? `  ${t.message}` : ''}`;
  };

  const summaryLine = (record: RunRecord) => {
    const counts = Object.entries(record.counts)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ');
    const status = record.status === 'succeeded' ? 'succeeded' : record.status === 'failed' ? 'failed' : 'cancelled';
    const mark = paint(
      record.status === 'succeeded' ? 'succeeded' : 'failed',
      record.status === 'succeeded' ? '✔' : '✖',
    );
    return `${mark} ${record.workflowName} ${status} in ${seconds(record.duration)}: ${counts || 'no tasks'}${record.dryRun ? ' (dry run)' : ''}  [run ${record.id}]${record.error ? `\n  ${record.error}` : ''}\n`;
  };

  if (mode === 'text') {
    return {
      observe: (p) => {
        if (p.kind === 'task' && p.task.status !== 'running') out.write(`${line(p.task)}\n`);
        if (p.kind === 'log' && verbose)
          out.write(`  ${p.task} | ${p.line.level === 'info' ? '' : `${p.line.level}: `}${p.line.message}\n`);
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
  // Whatever else reaches the terminal while the block is drawn (the process log prints warnings
  // and errors on stderr) would land inside the block and be erased by the next redraw, leaving a
  // stale task line behind: such writes go above the block instead, as finished tasks do.
  // Installed at the first progress, once the run has passed validation, so that a refused run
  // leaves stderr as it was.
  const err = options.err;
  const errWrite = err?.isTTY ? err.write : undefined;
  let redirected = false;
  const redirectErr = () => {
    if (!err || !errWrite || redirected) return;
    redirected = true;
    err.write = ((...args: Parameters<typeof errWrite>) => {
      clear();
      const written = errWrite.apply(err, args);
      draw();
      return written;
    }) as typeof errWrite;
  };
  return {
    observe: (p) => {
      redirectErr();
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
        const level = p.line.level === 'info' ? '' : `${p.line.level}: `;
        out.write(
          colour
            ? `\x1b[90m  ${p.task} |\x1b[0m ${level}${p.line.message}\n`
            : `  ${p.task} | ${level}${p.line.message}\n`,
        );
        draw();
      }
    },
    finish: (record) => {
      clearInterval(timer);
      if (redirected && err && errWrite) err.write = errWrite;
      running.clear();
      clear();
      out.write(summaryLine(record));
    },
  };
}
