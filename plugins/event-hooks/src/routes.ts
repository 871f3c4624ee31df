import * as api from './api.js';
import { reply, serve, type HttpRouter } from '@runner/plugin-sdk';
import type { HookStore } from './hook-store.js';
import type { HookHandlers } from './hooks.js';

/** `/api/v1/hooks` (service.md section 4): a hook is named by its id or its name. */
export function registerHookRoutes(router: HttpRouter, hooks: HookStore, handlers: HookHandlers): void {
  router.add(
    serve(api.getHooks, async () => {
      const list = await hooks.list();
      return { hooks: list, total: list.length };
    }),
  );
  router.add(serve(api.getHookEvents, () => ({ events: [...hooks.events] })));
  router.add(serve(api.postHooks, async ({ body }) => reply(201, await hooks.create(body))));
  router.add(serve(api.getHooksId, ({ params }) => hooks.get(params.id)));
  router.add(serve(api.putHooksId, ({ params, body }) => hooks.update(params.id, body)));
  router.add(
    serve(api.deleteHooksId, async ({ params }) => {
      await hooks.delete(params.id);
      return undefined;
    }),
  );
  router.add(serve(api.postHooksIdEnable, ({ params }) => hooks.update(params.id, { enabled: true })));
  router.add(serve(api.postHooksIdDisable, ({ params }) => hooks.update(params.id, { enabled: false })));
  router.add(
    serve(api.getHooksIdHistory, ({ params, query }) => hooks.history(params.id, query.limit ?? 50, query.offset ?? 0)),
  );
  router.add(serve(api.postHooksIdTest, ({ params, body }) => handlers.test(params.id, body ?? {})));
}
