import {
  ClusterRef,
  DashboardTilesRef,
  EventQueueRef,
  FlowsRef,
  HooksRef,
  HttpRouterRef,
  InvalidInputError,
  LuaRuntimeRef,
  MetricsRef,
  Permissions,
  ScriptDoorRef,
  StacksRef,
  StoreRef,
  WebSocketHubRef,
  definePlugin,
  isRunnerError,
  optional,
  type LuaRuntime,
} from '@runner/plugin-sdk';
import { hookCommand } from './commands.js';
import { routes } from './api.js';

/**
 * Hooks (named `event-hooks`: the kernel's lifecycle hooks and the engine's run taps are other
 * things): Lua scripts run on the event queue's events, through the engine's door.
 */
export const plugin = definePlugin({
  id: 'event-hooks',
  version: '0.1.0',
  routes,
  description: 'Lua hooks on events, in priority order, with retries, history and flows.run; /api/v1/hooks',
  profiles: ['master'],
  provides: [HooksRef],
  dependsOn: {
    store: StoreRef,
    queue: EventQueueRef,
    door: ScriptDoorRef,
    runtime: LuaRuntimeRef,
    router: optional(HttpRouterRef),
    hub: optional(WebSocketHubRef),
    cluster: optional(ClusterRef),
    flows: optional(FlowsRef),
    stacks: optional(StacksRef),
    tiles: optional(DashboardTilesRef),
    metrics: optional(MetricsRef),
  },
  async schema() {
    const { HOOK_MIGRATIONS } = await import('./hook-store.js');
    return [{ owner: 'event-hooks', migrations: HOOK_MIGRATIONS }];
  },
  commands: [hookCommand],
  async setup(ctx, { store, queue, door, runtime, router, hub, cluster, flows, stacks, tiles, metrics }) {
    const [{ HookStore, hookEvents }, { HookRunner }, { HookHandlers }, { registerHookRoutes }] = await Promise.all([
      import('./hook-store.js'),
      import('./hook-runner.js'),
      import('./hooks.js'),
      import('./routes.js'),
    ]);
    const hooks = new HookStore(
      store,
      compiler(runtime),
      (hook, change) => {
        cluster?.publish('event-hooks.changed', { id: hook.id });
        ctx.logger.info(`hook ${hook.name} (#${hook.id}) ${change}`);
      },
      hookEvents(queue.storedTypes),
      stacks,
      ctx.logger,
    );
    await hooks.open();
    ctx.provide(HooksRef, hooks.asService());
    const off = cluster?.subscribe<{ id: number }>('event-hooks.changed', ({ id }) => {
      hooks
        .refresh(id)
        .catch((error: Error) => ctx.logger.warn(`reading hook ${id} changed elsewhere failed: ${error.message}`));
    });
    const runner = new HookRunner(
      door,
      () => flows,
      (runId, depth) => queue.noteHandlerRun(runId, depth),
    );
    // Hook names are bounded (people create hooks), so they may be labels; event ids never are.
    const durations = metrics?.histogram<'hook' | 'success'>({
      name: 'runner_hook_duration_seconds',
      help: "one execution of a hook's script, by hook and whether it succeeded",
      labelNames: ['hook', 'success'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    const handlers = new HookHandlers(hooks, runner, ctx.logger, hub, (hook, result) =>
      durations?.observe({ hook: hook.name, success: String(result.success) }, result.durationMs / 1000),
    );
    const unset = queue.setHandlers(handlers);
    const untile = tiles?.contribute({
      id: 'hooks',
      title: 'Hooks',
      href: '/hooks',
      permission: Permissions.hookView,
      order: 40,
      read: async () => {
        const { total, enabled } = hooks.counts();
        return { value: total, detail: `${enabled} enabled` };
      },
    });
    if (router) registerHookRoutes(router, hooks, handlers);
    ctx.onStop(() => {
      off?.();
      unset();
      untile?.();
    });
  },
});

/** Compiles a script at save: a syntax error is refused with its line and column, on the `script` field. */
function compiler(runtime: LuaRuntime) {
  return (script: string, name: string) => {
    try {
      runtime.compile(script, `=hook ${name}`);
    } catch (error) {
      if (!isRunnerError(error)) throw error;
      const details = (error.details ?? {}) as { line?: number; column?: number };
      throw new InvalidInputError(`script: ${error.message}`, {
        field: 'script',
        details: { line: details.line, column: details.column },
      });
    }
  };
}
