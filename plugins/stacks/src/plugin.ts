import {
  ClusterRef,
  definePlugin,
  HttpRouterRef,
  optional,
  SecretsRef,
  StacksRef,
  StoreRef,
  WebSocketHubRef,
  WorkflowEngineRef,
} from '@runner/plugin-sdk';
import { routes } from './api.js';
import { stackCommand } from './commands.js';

/**
 * Stacks (environments): stored by the master, served at /api/v1/stacks, and a run's inputs
 * through the engine's run-input seam (`registerRunInputs`): a run naming a stack reads its
 * variables and its secrets (SecretsRef), which the redactor masks while it runs.
 */
export const plugin = definePlugin({
  id: 'stacks',
  version: '0.1.0',
  routes,
  description: 'Stacks (environments): variables and secrets runs read with --stack; REST API and CLI',
  profiles: ['master'],
  provides: [StacksRef],
  dependsOn: {
    store: StoreRef,
    engine: WorkflowEngineRef,
    secrets: optional(SecretsRef),
    router: optional(HttpRouterRef),
    hub: optional(WebSocketHubRef),
    cluster: optional(ClusterRef),
  },
  async schema() {
    const { STACK_MIGRATIONS } = await import('./stack-store.js');
    return [{ owner: 'stacks', migrations: STACK_MIGRATIONS }];
  },
  commands: [stackCommand],
  async setup(ctx, { store, engine, secrets, router, hub, cluster }) {
    const [{ StackStore }, { registerStackRoutes }, { stackRunInputs }] = await Promise.all([
      import('./stack-store.js'),
      import('./routes.js'),
      import('./run-inputs.js'),
    ]);
    const stacks = new StackStore(store, (name, change) => {
      hub?.broadcast('stack_update', { name, change });
      cluster?.publish('stacks.changed', { name });
    });
    await stacks.open();
    const off = cluster?.subscribe<{ name: string }>('stacks.changed', ({ name }) => {
      stacks
        .refresh(name)
        .catch((error: Error) =>
          ctx.logger.warn(`reading stack ${name} changed by another master failed: ${error.message}`),
        );
    });
    if (off) ctx.onStop(off);
    ctx.onStop(engine.registerRunInputs(stackRunInputs(stacks, secrets)));
    // The secrets API takes only stacks that exist; one another master made a moment ago is
    // read from the store before it is refused.
    secrets?.checkStacksWith((name) => stacks.check(name));
    ctx.provide(StacksRef, stacks);
    if (router) registerStackRoutes(router, stacks, { engine, secrets });
  },
});
