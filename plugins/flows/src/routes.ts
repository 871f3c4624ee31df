import * as api from './api.js';
import {
  encodedPer,
  InvalidInputError,
  reply,
  serve,
  type HttpRequest,
  type HttpRouter,
  type RunnerConfig,
} from '@runner/plugin-sdk';
import type { FlowRuns } from './flow-runs.js';
import type { ExportDocument, FlowStore } from './flow-store.js';
import { listWorkflowFiles } from './workflow-listing.js';

/** Who a change is recorded under: the caller's name, or `anonymous` where authentication is off. */
const author = (request: Pick<HttpRequest, 'principal'>) => request.principal?.name ?? 'anonymous';

/** `/api/v1/flows` and `/api/v1/workflows`. */
export function registerFlowRoutes(router: HttpRouter, flows: FlowStore, runs: FlowRuns, config: RunnerConfig): void {
  // The store hands back the same first page until a flow changes or runs: its encoding goes with
  // it, so a busy list costs no serialisation or masking per request (every caller that passed
  // workflow:view sees the same flows).
  const encodedPage = encodedPer((page: Awaited<ReturnType<FlowStore['list']>>) => JSON.stringify(page));
  router.add(serve(api.getFlows, async ({ query }) => encodedPage(await flows.list(query))));
  router.add(serve(api.postFlows, async (request) => reply(201, await flows.create(request.body, author(request)))));
  router.add(serve(api.getFlowsName, ({ params }) => flows.require(params.name)));
  router.add(serve(api.putFlowsName, (request) => flows.update(request.params.name, request.body, author(request))));
  router.add(
    serve(api.deleteFlowsName, async ({ params }) => {
      await flows.remove(params.name);
      return undefined;
    }),
  );
  router.add(serve(api.postFlowsNameActivate, (r) => flows.update(r.params.name, { active: true }, author(r))));
  router.add(serve(api.postFlowsNameDeactivate, (r) => flows.update(r.params.name, { active: false }, author(r))));

  router.add(
    serve(api.postFlowsNameRun, async (request) => {
      const { name } = request.params;
      const started = await runs.start(name, {
        trigger: 'api',
        ...(request.principal?.name === undefined ? {} : { user: request.principal.name }),
        ...request.body,
      });
      const common = { flow: name, version: started.version, inactive: started.inactive };
      if (started.outcome === 'started') return reply(202, { ...common, outcome: 'started', id: started.runId });
      if (started.outcome === 'queued') return reply(202, { ...common, outcome: 'queued', queue_id: started.queueId });
      return reply(202, { ...common, outcome: 'skipped', reason: started.reason });
    }),
  );

  router.add(serve(api.getFlowsNameVersions, ({ params }) => flows.versions(params.name)));
  router.add(serve(api.getFlowsNameVersionsVersion, ({ params }) => flows.version(params.name, params.version)));
  router.add(
    serve(api.getFlowsNameDiff, async ({ params, query }) => {
      const to = query.to ?? (await flows.require(params.name)).version;
      const from = query.from ?? to - 1;
      if (from < 1)
        throw new InvalidInputError(`flow "${params.name}" has only version ${to}: nothing to compare it with`, {
          field: 'from',
        });
      return flows.diff(params.name, from, to);
    }),
  );
  router.add(
    serve(api.postFlowsNameRestore, (r) =>
      flows.restore(r.params.name, r.body.version, author(r), r.body.base_version),
    ),
  );
  router.add(
    serve(api.postFlowsNameClone, async (r) =>
      reply(201, await flows.clone(r.params.name, r.body.new_name, author(r))),
    ),
  );

  router.add(serve(api.postFlowsExport, ({ body }) => flows.exportFlows(body.names, body.history === true)));
  router.add(
    serve(api.postFlowsImport, async (r) => reply(201, await flows.importFlows(r.body as ExportDocument, author(r)))),
  );

  router.add(
    serve(api.getWorkflows, async () => {
      const [{ flows: saved }, files] = await Promise.all([flows.list({ limit: 100_000 }), listWorkflowFiles(config)]);
      const workflows = [
        ...saved.map((f) => ({
          name: f.name,
          kind: 'flow' as const,
          active: f.active,
          version: f.version,
          description: f.description,
        })),
        ...files.map((f) => ({ name: f.name, kind: 'file' as const, path: f.path })),
      ];
      return { workflows, total: workflows.length };
    }),
  );
}
