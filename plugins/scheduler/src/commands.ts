import {
  InvalidInputError,
  formatTable,
  resourceAction,
  resourceCommand,
  type ActionInput,
  type CommandOption,
  type CommandSpec,
  type RouteAnswer,
} from '@runner/plugin-sdk';
import * as api from './api.js';

type JobAnswer = RouteAnswer<typeof api.getSchedulerJobsName>;

const VAR_OPTION: CommandOption = {
  flags: '--var <key=value>',
  description: 'a var every run gets (repeatable)',
  parse: (value: string, previous: unknown) => [...((previous as string[] | undefined) ?? []), value],
};

/** `--var k=v ...` as the body's `vars` (nothing when none is given: an update keeps the job's). */
function varsOf(input: ActionInput): Record<string, unknown> {
  const given = input.options.var as string[] | undefined;
  if (!given) return {};
  const vars: Record<string, string> = {};
  for (const arg of given) {
    const at = arg.indexOf('=');
    if (at <= 0) throw new InvalidInputError(`--var ${arg}: expected key=value`, { field: 'vars' });
    vars[arg.slice(0, at)] = arg.slice(at + 1);
  }
  return { vars };
}

const target = (job: { flow: string | null; workflow: string | null }) =>
  job.flow ? `flow ${job.flow}` : `file ${job.workflow}`;

/** A time in the job's zone, as people read it: `Sun 2026-03-29 03:30 CEST`. */
function inZone(at: string, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(new Date(at));
}

function describeJob(job: JobAnswer): string {
  const lines = [
    `name:      ${job.name}${job.description ? ` (${job.description})` : ''}`,
    `starts:    ${target(job)}`,
    `schedule:  ${job.schedule} in ${job.timezone}`,
    `enabled:   ${job.enabled ? 'yes' : 'no'}`,
    `missed:    ${job.missed}${job.missed === 'run_all' ? ` (cap ${job.missed_cap})` : ''}`,
    `overlap:   ${job.overlap}`,
    `stack:     ${job.stack ?? "the flow's or file's own"}`,
    `vars:      ${
      Object.entries(job.vars)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ') || '-'
    }`,
    `notify:    ${job.notify_on === 'never' ? 'never' : `on ${job.notify_on} to ${[job.notify_webhook, ...job.notify_email].filter(Boolean).join(', ')}`}`,
    `last:      ${job.last ? `${job.last.slot_at} ${job.last.outcome}${job.last.run_id ? ` run ${job.last.run_id} ${job.last.run_status ?? 'running'}` : ''}` : '-'}`,
    `next runs: ${job.next_runs.length === 0 ? '(disabled)' : ''}`,
    ...job.next_runs.map((at) => `  ${inZone(at, job.timezone)}  (${at})`),
  ];
  return `${lines.join('\n')}\n`;
}

const saidOf = (verb: string) => (job: JobAnswer) =>
  `job ${job.name} ${verb}; next run ${job.next_runs[0] ? inZone(job.next_runs[0], job.timezone) : 'none (disabled)'}\n`;

/** `runner scheduler ...`: each subcommand is one of the plugin's routes (api.ts). */
export const schedulerCommand: CommandSpec = resourceCommand({
  name: 'scheduler',
  description: 'Jobs that start a flow or workflow file on a cron schedule',
  actions: [
    resourceAction(api.getSchedulerJobs, {
      name: 'list',
      aliases: ['ls'],
      rows: 'jobs',
      // --watch: the list again every 2 s (each job's last slot and next run move on).
      watch: true,
      empty: 'no scheduler jobs (add one with runner scheduler add <name> --workflow <file> --schedule "<cron>")',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'STARTS', value: (j) => target(j as never) },
        { header: 'SCHEDULE', value: (j) => `${j.schedule as string} (${j.timezone as string})` },
        { header: 'ENABLED', value: (j) => (j.enabled ? 'yes' : 'no') },
        { header: 'NEXT RUN', value: (j) => (j.next_runs as string[])[0] ?? '-' },
        { header: 'LAST', value: (j) => (j.last ? `${(j.last as { outcome: string }).outcome}` : '-') },
      ],
    }),
    resourceAction(api.getSchedulerJobsName, { name: 'get', aliases: ['show'], text: describeJob }),
    resourceAction(api.postSchedulerJobs, {
      name: 'add',
      description: 'add a job: --workflow <file> or --flow <name>, --schedule "<cron>"',
      positional: ['name'],
      omit: ['vars'],
      options: [VAR_OPTION],
      body: varsOf,
      text: saidOf('added'),
    }),
    resourceAction(api.patchSchedulerJobsName, {
      name: 'update',
      omit: ['vars'],
      options: [VAR_OPTION],
      body: varsOf,
      text: saidOf('updated'),
    }),
    resourceAction(api.deleteSchedulerJobsName, {
      name: 'remove',
      aliases: ['rm'],
      text: (_answer, input) => `job ${input.args.name} removed\n`,
    }),
    resourceAction(api.postSchedulerJobsNameEnable, { name: 'enable', text: saidOf('enabled') }),
    resourceAction(api.postSchedulerJobsNameDisable, { name: 'disable', text: saidOf('disabled') }),
    resourceAction(api.postSchedulerJobsNameRun, {
      name: 'run-now',
      text: (slot) =>
        slot.outcome === 'started'
          ? `job ${slot.job} started run ${slot.run_id ?? '(queued by the flow)'}\n`
          : `job ${slot.job}: ${slot.outcome}${slot.detail ? `: ${slot.detail}` : ''}\n`,
      exitCode: (slot) => (slot.outcome === 'started' ? 0 : 1),
    }),
    resourceAction(api.getSchedulerJobsNameHistory, {
      name: 'history',
      watch: true,
      text: (answer) =>
        answer.slots.length === 0
          ? 'no slots yet\n'
          : formatTable(
              ['SLOT', 'KIND', 'OUTCOME', 'STARTED', 'RUN', 'STATUS', 'DETAIL'],
              answer.slots.map((s) => [
                s.slot_at,
                s.kind,
                s.outcome,
                s.started_at ?? '-',
                s.run_id ?? '-',
                s.run_status ?? (s.outcome === 'started' ? 'running' : '-'),
                s.detail ?? '',
              ]),
            ) +
            (answer.total > answer.slots.length
              ? `(${answer.slots.length} of ${answer.total}; --offset for more)\n`
              : ''),
    }),
  ],
});
