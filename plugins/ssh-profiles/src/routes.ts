import * as api from './api.js';
import { serve, reply, type HttpRouter } from '@runner/plugin-sdk';
import type { ProfileStore } from './profile-store.js';
import type { SshProfilesService } from './profiles.js';

/** `/api/v1/ssh`: list, create, show, replace, delete, test, and each profile's audit log. */
export function registerSshRoutes(router: HttpRouter, service: SshProfilesService, store: ProfileStore): void {
  const actor = (request: { principal?: { name: string } }) => request.principal?.name ?? 'local';

  router.add(
    serve(api.getSsh, async () => {
      const profiles = await service.list();
      return { profiles, total: profiles.length };
    }),
  );

  router.add(
    serve(api.postSsh, async (request) => {
      const { name, ...input } = request.body;
      return reply(201, await service.create(name, input, actor(request)));
    }),
  );

  router.add(serve(api.getSshName, ({ params }) => service.get(params.name)));

  router.add(
    serve(api.putSshName, async (request) => {
      const { unpin_host_key: unpin, ...input } = request.body;
      await service.update(request.params.name, input, actor(request));
      if (unpin) await store.unpinHostKey(request.params.name);
      return service.get(request.params.name);
    }),
  );

  router.add(
    serve(api.deleteSshName, async ({ params }) => {
      await service.remove(params.name);
      return undefined;
    }),
  );

  router.add(
    serve(api.postSshNameTest, async (request) => {
      const started = performance.now();
      const connection = await service.connect(request.params.name, {
        actor: actor(request),
        trustHostKey: request.body?.trust_host_key === true,
      });
      try {
        const result = await connection.exec('uname -a', { timeoutMs: 30_000 });
        return {
          ok: result.code === 0,
          host_key: { type: connection.hostKey.type, fingerprint: connection.hostKey.fingerprint },
          remote: result.stdout.trim(),
          duration_ms: Math.round(performance.now() - started),
        };
      } finally {
        connection.close();
      }
    }),
  );

  router.add(
    serve(api.getSshNameAudit, async ({ params, query }) => {
      await service.get(params.name);
      return store.auditLog(params.name, query.limit ?? 100, query.offset ?? 0);
    }),
  );
}
