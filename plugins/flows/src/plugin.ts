import {
  ClusterRef,
  DashboardTilesRef,
  definePlugin,
  FlowsRef,
  HttpRouterRef,
  optional,
  Permissions,
  StoreRef,
  WebSocketHubRef,
  WorkflowEngineRef,
  type FlowsService,
} from '@runner/plugin-sdk';
import { routes } from './api.js';
import { flowCommand } from './commands.js';

/**
 * Saved flows: workflows kept in the store with numbered versions, served at /api/v1/flows, run
 * under their concurrency through FlowsRef (the scheduler and hooks start them there), and
 * resolved by the engine as `{ kind: 'flow', ref, version }` sources.
 */
export const plugin = definePlugin({
  id: 'flows',
  version: '0.1.0',
  routes,
  description: 'Saved flows: versions, diff, restore, search, export/import, per-flow concurrency; REST API and CLI',
  // Embedded too: `runner run <name>` without a master runs the saved flow of the local store.
  profiles: ['master', 'embedded'],
  provides: [FlowsRef],
  dependsOn: {
    store: StoreRef,
    engine: WorkflowEngineRef,
    router: optional(HttpRouterRef),
    hub: optional(WebSocketHubRef),
    cluster: optional(ClusterRef),
    tiles: optional(DashboardTilesRef),
  },
  async schema() {
    const { FLOW_MIGRATIONS } = await import('./flow-store.js');
    return [{ owner: 'flows', migrations: FLOW_MIGRATIONS }];
  },
  commands: [flowCommand],
  async setup(ctx, { store, engine, router, hub, cluster, tiles }) {
    const [{ FlowStore }, { FlowRuns, SWEEP_MS }, { registerFlowRoutes }] = await Promise.all([
      import('./flow-store.js'),
      import('./flow-runs.js'),
      import('./routes.js'),
    ]);
    const flows = new FlowStore(
      store,
      // The engine's own check, so a save is refused with the problems `runner run` would print.
      async (name, yaml) => {
        await engine.validate({ source: { content: yaml, name, label: `${name}.yaml` } });
      },
      (name, change) => {
        // Other masters forget their kept list pages (FlowStore.list); browsers hear of edits only.
        cluster?.publish('flows.changed', { flow: name });
        if (change !== 'ran')
          hub?.broadcast('workflow_update', { flow: name, change }, { permission: Permissions.workflowView });
      },
      undefined,
      ctx.logger,
    );
    const unchanged = cluster?.subscribe('flows.changed', () => flows.changed());
    if (unchanged) ctx.onStop(unchanged);
    await flows.open();
    engine.registerSource('flow', async ({ ref, version }) => {
      const chosen = version ?? (await flows.require(ref)).version;
      const { yaml } = await flows.version(ref, chosen);
      return { content: yaml, name: ref, path: `${ref}.yaml@${chosen}` };
    });

    const runs = new FlowRuns(flows, store, engine, ctx.logger, (runId, reason) => {
      void engine.cancel(runId, { by: 'flows', reason }).catch(() => {});
      cluster?.publish('flows.cancel', { runId, reason });
    });
    const off = cluster?.subscribe<{ runId: string; reason: string }>('flows.cancel', ({ runId, reason }) => {
      void engine.cancel(runId, { by: 'flows', reason }).catch(() => {});
    });
    if (off) ctx.onStop(off);

    const service: FlowsService = {
      get: (name) => flows.get(name),
      count: () => flows.count(),
      referencing: (word) => flows.referencing(word),
      start: (name, request) => runs.start(name, request),
      versions: async (name) => (await flows.versions(name)).versions.map((v) => ({ ...v, commit: v.commit ?? null })),
      applyBatch: (batch, origin, unit) => flows.applyBatch(batch, origin, unit),
    };
    ctx.provide(FlowsRef, service);
    if (router) registerFlowRoutes(router, flows, runs, ctx.config);

    const untile = tiles?.contribute({
      id: 'workflows',
      title: 'Workflows',
      href: '/flows',
      permission: Permissions.workflowView,
      order: 30,
      read: async () => {
        const { total, active } = await flows.count();
        return { value: total, detail: `${active} active` };
      },
    });
    if (untile) ctx.onStop(untile);

    if (ctx.profile === 'master') {
      // Every master frees slots whose runs ended unseen (a master killed) and starts what waits.
      let timer: NodeJS.Timeout | undefined;
      ctx.lifecycle.ready.tapPromise('flows', async () => {
        void runs.sweep();
        timer = setInterval(() => void runs.sweep(), SWEEP_MS);
        timer.unref();
      });
      ctx.onStop(() => clearInterval(timer));
    }
  },
});
