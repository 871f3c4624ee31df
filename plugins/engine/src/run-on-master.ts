import { basename, extname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { callRoute, type CommandContext, type MasterClient, type RunRecord, type RunRequest } from '@runner/plugin-sdk';
import { postWorkflowsRun } from './api.js';
import { runFromApi, type ApiRun, type ApiTask } from './api-shape.js';
import { exitCodeOf, signalExitCode, type RunOptions } from './run-command.js';
import { runViewFor } from './run-view.js';
import { inWorkflowDirs, readWorkflowFile, workflowDirs } from './workflow-files.js';

type ApiRecord = ApiRun & { tasks: (ApiTask & { log: RunRecord['tasks'][number]['log'] })[] };

/** How often the run is read while it goes on. */
const POLL_MS = 200;

/** Sends the workflow to the master (its file, or its text), then follows the run (followOnMaster). */
export async function runOnMaster(
  master: MasterClient,
  request: RunRequest,
  ctx: CommandContext,
  options: RunOptions,
): Promise<number> {
  const file = resolve((request.source as { file: string }).file);
  // A master holding this data directory is on this machine: it reads a file under its workflow
  // directories itself, and problems are reported at the file's path. Any other file is the
  // user's own, which the master may not read: it gets the text, as a remote master does.
  const source =
    master.endpoint.local && (await inWorkflowDirs(file, workflowDirs(ctx.config)))
      ? { file }
      : {
          content: await readWorkflowFile(file),
          workflow_name: request.workflowName ?? basename(file, extname(file)),
          // Problems name the file as typed, as they do when the master reads it (bad.yaml:4:18).
          content_label: (request.source as { file: string }).file,
        };
  // Ctrl-C is taken from before the run is submitted: one pressed while the master answers (or
  // starts the run's first command before this process gets the CPU back) cancels the run as soon
  // as its id is known, instead of ending this process with the run left going.
  return withInterrupt(ctx, async (interrupt) =>
    followOnMaster(master, (await submit(master, request, source)).id, ctx, options, interrupt),
  );
}

function submit(
  master: MasterClient,
  request: RunRequest,
  source: { file: string } | { content: string; workflow_name: string; content_label: string },
) {
  // The master's error answer comes back as a RunnerError of its kind and code: a workflow the
  // master refused exits 2 as it does when run embedded.
  return callRoute(master, postWorkflowsRun, {
    body: {
      workflow_name: request.workflowName,
      ...source,
      group: request.group,
      vars: request.vars,
      values: request.values,
      delegate_to: request.delegateTo,
      forks: request.forks,
      dry_run: request.dryRun,
      verbose: request.verbose,
      trigger: 'cli',
    },
  });
}

/**
 * Ctrl-C (or TERM) while a run on the master is submitted or followed: the first asks for the run
 * to be cancelled (`signal`, and `wake` ends the wait between two reads), a second exits at once.
 */
export class RunInterrupt {
  signal: NodeJS.Signals | undefined;
  readonly wake = new AbortController();
  readonly #onSignal = (signal: NodeJS.Signals) => {
    if (this.signal) process.exit(signalExitCode(signal));
    this.signal = signal;
    this.ctx.stderr.write(`runner: ${signal}: cancelling the run on the master (again to exit at once)\n`);
    this.wake.abort();
  };

  constructor(private readonly ctx: CommandContext) {
    process.on('SIGINT', this.#onSignal).on('SIGTERM', this.#onSignal);
  }

  dispose(): void {
    process.off('SIGINT', this.#onSignal).off('SIGTERM', this.#onSignal);
  }
}

/**
 * Runs `body` with Ctrl-C (and TERM) taken by a RunInterrupt from now until it ends: a command
 * that submits a run and follows it takes the signal before it submits (see runOnMaster).
 */
export async function withInterrupt<T>(ctx: CommandContext, body: (interrupt: RunInterrupt) => Promise<T>): Promise<T> {
  const interrupt = new RunInterrupt(ctx);
  try {
    return await body(interrupt);
  } finally {
    interrupt.dispose();
  }
}

/**
 * Follows a run on the master until it ends. Ctrl-C (or TERM) cancels the run on the master, which
 * stops its tasks there and on agents, shows the final record and exits 130 (143); a second
 * signal exits at once, leaving the run to the master.
 */
export async function followOnMaster(
  master: MasterClient,
  runId: string,
  ctx: CommandContext,
  options: RunOptions,
  /** Taken before the run was submitted (withInterrupt). */
  interrupt: RunInterrupt,
): Promise<number> {
  const view = runViewFor(ctx, options);
  const path = `/executions/${encodeURIComponent(runId)}`;
  const seen = new Map<string, string>();
  const show = (record: RunRecord) => {
    for (const task of record.tasks) {
      const key = `${task.name}:${task.status}`;
      if (seen.get(task.name) === key) continue;
      seen.set(task.name, key);
      const { log, ...summary } = task;
      if (options.verbose)
        for (const line of log) view.observe({ kind: 'log', runId: record.id, task: task.name, line });
      view.observe({ kind: 'task', runId: record.id, task: summary });
    }
  };
  for (;;) {
    if (interrupt.signal) {
      // Answers once the run has ended there, with its final record (the tasks without logs of
      // the run's own view are read again, so the view shows every task's end).
      await master.call('POST', `${path}/cancel`, { timeoutMs: 60_000 });
      const record = runFromApi(await master.call<ApiRecord>('GET', path));
      show(record);
      view.finish(record);
      return signalExitCode(interrupt.signal);
    }
    const record = runFromApi(await master.call<ApiRecord>('GET', path));
    show(record);
    if (record.status !== 'running') {
      view.finish(record);
      return exitCodeOf(record);
    }
    await sleep(POLL_MS, undefined, { signal: interrupt.wake.signal }).catch(() => {});
  }
}
