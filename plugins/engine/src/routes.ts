import * as api from './api.js';
import {
  ConflictError,
  serve,
  encodedPer,
  InvalidInputError,
  NotFoundError,
  noteForAudit,
  reply,
  STREAMED,
  type HttpRouter,
  type Redactor,
  type RunRequest,
  type WorkflowEngine,
  type WorkflowProblem,
  WorkflowValidationError,
} from '@runner/plugin-sdk';
import { once } from 'node:events';
import type { Static } from '@runner/plugin-sdk/schema';
import { RunBody } from './api-schemas.js';
import { runToApi } from './api-shape.js';
import type { HistogramFilter } from './run-list.js';
import { RunLogReader, type LogSources } from './run-log.js';

/**
 * A `POST /workflows/run` body, already checked against RunBody by the router, as a run request.
 * Only the rule a schema cannot say well is checked here.
 */
export function runRequestFromBody(b: Static<typeof RunBody>, user?: string, workflowDirs: string[] = []): RunRequest {
  if ((b.file === undefined) === (b.content === undefined))
    throw new InvalidInputError('give exactly one of file (a path on the master) or content (the workflow text)', {
      field: b.file ? 'content' : 'file',
    });
  return {
    source:
      b.file !== undefined
        ? { file: b.file, within: workflowDirs }
        : { content: b.content as string, name: b.workflow_name, label: b.content_label },
    workflowName: b.workflow_name,
    group: b.group,
    delegateTo: b.delegate_to,
    ...(b.forks === undefined ? {} : { forks: b.forks }),
    vars: b.vars,
    values: b.values as Record<string, Record<string, unknown>> | undefined,
    dryRun: b.dry_run === true,
    verbose: b.verbose === true,
    trigger: b.trigger ?? 'api',
    ...(user === undefined ? {} : { user }),
    ...(b.stack === undefined ? {} : { stack: b.stack }),
    ...(b.confirm === undefined ? {} : { confirm: b.confirm }),
  };
}

/** A problem as the API shows it: the file name is the request's own, so it is left out. */
function problemToApi(p: WorkflowProblem) {
  return {
    message: p.message,
    ...(p.line > 0 ? { line: p.line, column: p.column } : {}),
    ...(p.path ? { path: p.path } : {}),
  };
}

/** A name safe inside a Content-Disposition header. */
function fileName(name: string): string {
  return name.replace(/[^\w.-]+/g, '_');
}

/** `workflowDirs`: the only directories the `file` field may read from (engine.workflow_dirs). */
export function registerRoutes(
  router: HttpRouter,
  engine: WorkflowEngine,
  workflowDirs: string[],
  redactor?: Redactor,
  logSources?: LogSources,
  histogram?: (filter: HistogramFilter) => Promise<{ start: string; counts: Record<string, number> }[]>,
): void {
  const encodedPage = encodedPer((page: Awaited<ReturnType<WorkflowEngine['list']>>, limit?: number, offset?: number) =>
    JSON.stringify({ executions: page.runs.map(runToApi), total: page.total, limit, offset }),
  );
  /** The answer to a started run: 202 while it goes on. */
  const accepted = async (runId: string) => {
    const run = await engine.get(runId, { log: false });
    return reply(202, { id: runId, status: run?.status ?? 'running', workflow_name: run?.workflowName });
  };
  const logs = new RunLogReader((id, options) => engine.get(id, options), redactor, logSources);
  router.add(
    serve(api.postWorkflowsRun, async (request) => {
      // Who started it is who the authentication guard says is calling, never what the body says.
      const { runId, workflowName } = await engine.start(
        runRequestFromBody(request.body, request.principal?.name, workflowDirs),
      );
      noteForAudit(request, `workflow ${workflowName}, run ${runId}`);
      return accepted(runId);
    }),
  );

  router.add(
    serve(api.postWorkflowsValidate, async (request) => {
      try {
        const { workflowName, tasks, warnings } = await engine.validate(
          runRequestFromBody(request.body, request.principal?.name, workflowDirs),
        );
        return {
          valid: true,
          workflow_name: workflowName,
          tasks,
          problems: [],
          warnings: warnings.map(problemToApi),
        };
      } catch (error) {
        if (error instanceof WorkflowValidationError)
          return {
            valid: false,
            problems: error.problems.map(problemToApi),
            warnings: error.warnings.map(problemToApi),
          };
        // A problem of the run's options rather than of the text (delegate_to naming an unknown agent).
        const field = error instanceof InvalidInputError ? error.details?.field : undefined;
        if (typeof field === 'string' && field !== 'file' && field !== 'content')
          return { valid: false, problems: [{ message: (error as Error).message, path: field }], warnings: [] };
        throw error;
      }
    }),
  );

  router.add(
    serve(api.getExecutionsIdInputs, async (request) => {
      const { id } = request.params;
      const stored = await engine.request(id);
      if (stored === undefined) {
        if (!(await engine.get(id, { log: false }))) throw new NotFoundError(`no execution with id "${id}"`);
        return { recorded: false, reason: 'this run was recorded before runs kept their inputs' };
      }
      if (stored === 'withheld')
        return { recorded: false, reason: 'this run was started with a secret in its inputs, which runs never store' };
      return { recorded: true, inputs: inputsToApi(stored) };
    }),
  );

  router.add(
    serve(api.postExecutionsIdRerun, async (request) => {
      const { id } = request.params;
      const stored = await engine.request(id);
      if (!stored) {
        if (!(await engine.get(id, { log: false }))) throw new NotFoundError(`no execution with id "${id}"`);
        throw new ConflictError(
          `execution "${id}" was recorded before runs kept their inputs; start it from its workflow instead`,
        );
      }
      if (stored === 'withheld')
        throw new ConflictError(
          `execution "${id}" was started with a secret in its inputs, which runs never store; start it again from its workflow`,
        );
      const source = 'file' in stored.source ? { file: stored.source.file, within: workflowDirs } : stored.source;
      const { runId, workflowName } = await engine.start({
        ...stored,
        source,
        trigger: 'api',
        rerunOf: id,
        ...(request.principal?.name === undefined ? {} : { user: request.principal.name }),
      });
      noteForAudit(request, `workflow ${workflowName}, run ${runId} (again of ${id})`);
      return accepted(runId);
    }),
  );

  if (histogram)
    router.add(
      serve(api.getExecutionsHistogram, async ({ query }) => ({
        // The schema allows hour and day only.
        buckets: await histogram({ ...query, bucket: query.bucket as HistogramFilter['bucket'] }),
      })),
    );

  router.add(
    serve(api.getExecutions, async ({ query }) => {
      const page = await engine.list(query);
      // The engine hands back the same page object until a run is written (first pages are
      // cached): the same EncodedJson goes with it, so the router serves the bytes it kept (masked,
      // encoded, with an ETag) and a busy list costs no serialisation per request. Every caller
      // that passed workflow:view sees the same runs, so one encoding per page serves them all.
      return encodedPage(page, query.limit, query.offset);
    }),
  );

  router.add(
    serve(api.getExecutionsId, async (request) => {
      const withLog = request.query.log !== false;
      const run = await engine.get(request.params.id, { log: withLog });
      if (!run) throw new NotFoundError(`no execution with id "${request.params.id}"`);
      return runToApi(withLog ? run : { ...run, tasks: run.tasks.map(({ log: _, ...task }) => task) });
    }),
  );

  router.add(
    serve(api.getExecutionsIdLog, async (request) => {
      const { id } = request.params;
      const { format, tail, before, task, agent, q, level } = request.query;
      if (format !== 'text') {
        const page = await logs.page(id, { tail, before, task, agent, q, level });
        if (!page) throw new NotFoundError(`no execution with id "${id}"`);
        return page;
      }
      const chunks = await logs.text(id, { task, agent, q, level });
      if (!chunks) throw new NotFoundError(`no execution with id "${id}"`);
      const name = `${fileName((await engine.get(id, { log: false }))?.workflowName ?? 'run')}-${fileName(id)}.log`;
      const { res } = request.raw;
      res.writeHead(200, {
        'content-type': 'text/plain; charset=utf-8',
        'content-disposition': `attachment; filename="${name}"`,
        'cache-control': 'no-store',
      });
      // Written as the client takes it: a long log is not held twice in memory.
      for (const chunk of chunks) {
        if (res.destroyed) return STREAMED;
        if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
      res.end();
      return STREAMED;
    }),
  );

  router.add(
    serve(api.postExecutionsIdCancel, async (request) => {
      // Until authentication exists the caller is known by its address only.
      const by = request.principal?.name ?? `unauthenticated client at ${request.remoteAddress}`;
      const run = await engine.cancel(request.params.id, { by });
      if (!run) throw new NotFoundError(`no execution with id "${request.params.id}"`);
      return runToApi(run);
    }),
  );
}

/** A run's kept inputs as the API shows them (snake_case, like the run body they came from). */
function inputsToApi(request: RunRequest) {
  const source = request.source;
  return {
    ...('file' in source
      ? { file: source.file }
      : 'content' in source
        ? { content: source.content }
        : { source: `${source.kind} ${source.ref}${source.version === undefined ? '' : ` v${source.version}`}` }),
    ...(request.workflowName === undefined ? {} : { workflow_name: request.workflowName }),
    ...(request.group === undefined ? {} : { group: request.group }),
    ...(request.delegateTo === undefined ? {} : { delegate_to: request.delegateTo }),
    ...(request.forks === undefined ? {} : { forks: request.forks }),
    ...(request.stack === undefined ? {} : { stack: request.stack }),
    ...(request.vars === undefined ? {} : { vars: request.vars }),
    ...(request.values === undefined ? {} : { values: request.values }),
    dry_run: request.dryRun === true,
    verbose: request.verbose === true,
  };
}
