import {
  defineRoute,
  encodedJson,
  InvalidInputError,
  NotFoundError,
  Permissions,
  reply,
  type HttpRouter,
  type RunRequest,
  type WorkflowEngine,
} from '@runner/plugin-sdk';
import type { Static } from '@runner/plugin-sdk/schema';
import { ExecutionList, ExecutionParams, ExecutionsQuery, RunAccepted, RunBody, RunSchema } from './api-schemas.js';
import { runToApi } from './api-shape.js';

/**
 * A `POST /workflows/run` body, already checked against RunBody by the router, as a run request.
 * Only the rule a schema cannot say well is checked here.
 */
export function runRequestFromBody(b: Static<typeof RunBody>, user?: string): RunRequest {
  if ((b.file === undefined) === (b.content === undefined))
    throw new InvalidInputError('give exactly one of file (a path on the master) or content (the workflow text)', {
      field: b.file ? 'content' : 'file',
    });
  return {
    source: b.file !== undefined ? { file: b.file } : { content: b.content as string, name: b.workflow_name },
    workflowName: b.workflow_name,
    group: b.group,
    delegateTo: b.delegate_to,
    vars: b.vars,
    values: b.values as Record<string, Record<string, unknown>> | undefined,
    dryRun: b.dry_run === true,
    verbose: b.verbose === true,
    trigger: b.trigger ?? 'api',
    ...(user === undefined ? {} : { user }),
  };
}

export function registerRoutes(router: HttpRouter, engine: WorkflowEngine): void {
  const encodedPages = new WeakMap<object, string>();
  router.add(
    defineRoute({
      method: 'POST',
      path: '/workflows/run',
      summary: 'start a run of a workflow file on the master or of workflow text',
      tags: ['workflows'],
      permission: Permissions.workflowExecute,
      body: RunBody,
      responses: { 202: RunAccepted },
      handler: async (request) => {
        // Who started it is who the authentication guard says is calling, never what the body says.
        const { runId } = await engine.start(runRequestFromBody(request.body, request.principal?.name));
        const run = engine.get(runId);
        return reply(202, { id: runId, status: run?.status ?? 'running', workflow_name: run?.workflowName });
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/executions',
      summary: 'runs, newest first, with filters and paging',
      tags: ['executions'],
      permission: Permissions.workflowView,
      query: ExecutionsQuery,
      responses: { 200: ExecutionList },
      handler: ({ query }) => {
        const page = engine.list(query);
        // The engine hands back the same page object until a run is written (first pages are
        // cached): its encoding is kept with it, so a busy list costs no serialisation per request.
        let text = encodedPages.get(page);
        if (text === undefined) {
          const { runs, total } = page;
          text = JSON.stringify({ executions: runs.map(runToApi), total, limit: query.limit, offset: query.offset });
          encodedPages.set(page, text);
        }
        return encodedJson(text);
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/executions/:id',
      summary: 'one run with its tasks and their logs',
      tags: ['executions'],
      permission: Permissions.workflowView,
      params: ExecutionParams,
      responses: { 200: RunSchema },
      handler: (request) => {
        const run = engine.get(request.params.id);
        if (!run) throw new NotFoundError(`no execution with id "${request.params.id}"`);
        return runToApi(run);
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'POST',
      path: '/executions/:id/cancel',
      summary: 'cancel a running run: its tasks are stopped and it ends cancelled',
      description:
        'Running tasks are stopped (their processes killed by process group, delegated tasks cancelled on their agents), the rest are skipped, and the run ends `cancelled` with `cancelled_by`. Answers once the run has ended, with its record; a run that had already ended is returned as it is.',
      tags: ['executions'],
      // The role table's own permission for this (granted to every role that may execute).
      permission: Permissions.workflowCancel,
      params: ExecutionParams,
      responses: { 200: RunSchema },
      handler: async (request) => {
        // Until authentication exists the caller is known by its address only.
        const by = request.principal?.name ?? `unauthenticated client at ${request.remoteAddress}`;
        const run = await engine.cancel(request.params.id, { by });
        if (!run) throw new NotFoundError(`no execution with id "${request.params.id}"`);
        return runToApi(run);
      },
    }),
  );
}
