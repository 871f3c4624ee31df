import { roundSeconds, type RunRecord, type TaskResult } from '@runner/plugin-sdk';

/**
 * Runs and task results as the REST API and `runner run --output json` show them: snake_case keys,
 * like the request body (`workflow_name`, `dry_run`), the event payloads and every other resource
 * of the API. The SDK's types stay camelCase for TypeScript callers. User data (outputs, loop items,
 * log fields) is passed as it is.
 */
export type ApiTask = ReturnType<typeof taskToApi>;
export type ApiRun = ReturnType<typeof runToApi>;

export function taskToApi(task: Omit<TaskResult, 'log'> & { log?: TaskResult['log'] }) {
  return {
    name: task.name,
    task: task.task,
    ...(task.item !== undefined ? { item: task.item } : {}),
    agent: task.agent,
    status: task.status,
    attempts: task.attempts,
    started_at: task.startedAt,
    completed_at: task.completedAt,
    duration: roundSeconds(task.duration),
    message: task.message,
    outputs: task.outputs,
    ...(task.log !== undefined ? { log: task.log } : {}),
    log_truncated: task.logTruncated,
  };
}

export function runToApi(
  run: Omit<RunRecord, 'tasks'> & { tasks?: (Omit<TaskResult, 'log'> & { log?: TaskResult['log'] })[] },
) {
  return {
    id: run.id,
    workflow_name: run.workflowName,
    status: run.status,
    dry_run: run.dryRun,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    duration: roundSeconds(run.duration),
    error: run.error,
    trigger: run.trigger,
    ...(run.user !== undefined ? { user: run.user } : {}),
    ...(run.cancelledBy !== undefined ? { cancelled_by: run.cancelledBy } : {}),
    ...(run.rerunOf !== undefined ? { rerun_of: run.rerunOf } : {}),
    ...(run.stack !== undefined ? { stack: run.stack } : {}),
    counts: run.counts,
    ...(run.tasks !== undefined ? { tasks: run.tasks.map(taskToApi) } : {}),
  };
}

/** The reverse, for `runner run` following a run on the master. */
export function runFromApi(run: ApiRun & { tasks: (ApiTask & { log: TaskResult['log'] })[] }): RunRecord {
  return {
    id: run.id,
    workflowName: run.workflow_name,
    status: run.status,
    dryRun: run.dry_run,
    startedAt: run.started_at,
    completedAt: run.completed_at,
    duration: run.duration,
    error: run.error,
    trigger: run.trigger,
    user: run.user,
    cancelledBy: run.cancelled_by,
    rerunOf: run.rerun_of,
    stack: run.stack,
    counts: run.counts,
    tasks: run.tasks.map((t) => ({
      name: t.name,
      task: t.task,
      item: t.item,
      agent: t.agent,
      status: t.status,
      attempts: t.attempts,
      startedAt: t.started_at,
      completedAt: t.completed_at,
      duration: t.duration,
      message: t.message,
      outputs: t.outputs,
      log: t.log ?? [],
      logTruncated: t.log_truncated,
    })),
  };
}
