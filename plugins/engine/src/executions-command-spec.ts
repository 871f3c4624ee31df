import { formatDuration, formatTable, resourceCommand, type ActionInput, type CommandSpec } from '@runner/plugin-sdk';
import {
  getExecutions,
  getExecutionsId,
  getExecutionsIdLog,
  postExecutionsIdCancel,
  postExecutionsIdRerun,
} from './api.js';
import type { ApiRun } from './api-shape.js';

type Row = Record<string, unknown>;

/** A run's seconds for people: `850ms`, `1.5s`, `2m 5s`; `running` while it has no end. */
const duration = (run: Row) =>
  run.status === 'running' ? 'running' : formatDuration(Math.round(Number(run.duration) * 1000));

/** `runner executions ...`: runs recorded by the master, each subcommand one of its routes. */
export const executionsCommand: CommandSpec = resourceCommand({
  name: 'executions',
  description: 'runs recorded by the master',
  actions: [
    {
      name: 'list',
      aliases: ['ls'],
      route: getExecutions,
      description: 'runs, newest first (filters: --workflow, --status, --since; paging: --limit, --offset)',
      rows: 'executions',
      watch: true,
      empty: 'no executions',
      columns: [
        { header: 'ID', field: 'id' },
        { header: 'WORKFLOW', field: 'workflow_name' },
        { header: 'STATUS', field: 'status' },
        { header: 'STARTED', field: 'started_at' },
        { header: 'DURATION', value: duration },
        { header: 'TRIGGER', field: 'trigger' },
        { header: 'USER', field: 'user' },
      ],
    },
    {
      name: 'get',
      route: getExecutionsId,
      description: 'one run with its tasks (--log includes their logs in json and yaml output)',
      watch: true,
      text: (run: ApiRun) => runText(run),
    },
    {
      name: 'logs',
      route: getExecutionsIdLog,
      // The text download is not a page of lines; --output json has the lines as data.
      omit: ['format'],
      description: "a run's log, the last --tail lines (filters: --task, --agent, --q)",
      text: (page: { lines: Row[]; matched: number; total: number }) =>
        page.lines
          .map(
            (l) =>
              `${String(l.timestamp)} ${String(l.level).toUpperCase().padEnd(5)} [${String(l.task)}] ${String(l.message)}`,
          )
          .join('\n') + (page.lines.length > 0 ? '\n' : 'no log lines\n'),
    },
    {
      name: 'cancel',
      route: postExecutionsIdCancel,
      description: 'cancel a running run: its tasks are stopped (on agents too) and it ends cancelled',
      // The master answers once the run has ended: its tasks stop within the kill grace, or as
      // soon as an agent reports back.
      timeoutMs: 60_000,
      text: (run: ApiRun) =>
        run.status === 'cancelled'
          ? `run ${run.id} (${run.workflow_name}) cancelled${run.cancelled_by ? ` by ${run.cancelled_by}` : ''}\n`
          : `run ${run.id} (${run.workflow_name}) had already ended: ${run.status}\n`,
      // 0 once the run is cancelled (also when it already was), 1 when it had ended otherwise.
      exitCode: (run: ApiRun) => (run.status === 'cancelled' ? 0 : 1),
    },
    {
      name: 'rerun',
      route: postExecutionsIdRerun,
      text: (run: { id: string; workflow_name?: string }, input: ActionInput) =>
        `run ${run.id} (${run.workflow_name ?? 'workflow'}) started again from ${input.args.id}; follow it with runner executions get ${run.id} --watch\n`,
    },
  ],
});

/** A run as `field: value` lines and its tasks as a table. */
function runText(run: ApiRun): string {
  const fields: [string, unknown][] = [
    ['id', run.id],
    ['workflow', run.workflow_name],
    ['status', run.status],
    ['started', run.started_at],
    ['completed', run.completed_at],
    ['duration', duration(run)],
    ['trigger', run.trigger],
    ['user', run.user],
    ['cancelled by', run.cancelled_by],
    ['rerun of', run.rerun_of],
    ['error', run.error],
  ];
  const head = fields
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `${`${name}:`.padEnd(14)}${String(value)}`)
    .join('\n');
  const tasks = run.tasks ?? [];
  if (tasks.length === 0) return `${head}\n`;
  const table = formatTable(
    ['TASK', 'AGENT', 'STATUS', 'ATTEMPTS', 'DURATION', 'MESSAGE'],
    tasks.map((t) => [t.name, t.agent, t.status, String(t.attempts), duration(t), t.message ?? '']),
  );
  return `${head}\n\n${table}`;
}
