import { ConflictError, noteForAudit, reply, serve, type HttpRouter, type Logger } from '@runner/plugin-sdk';
import * as api from './api.js';
import type { GitOps } from './gitops.js';
import { checkSignature } from './webhook.js';

/** `/api/v1/gitops`: status, diff, sync, and the webhook that starts a sync. */
export function registerGitopsRoutes(
  router: HttpRouter,
  gitops: GitOps,
  options: { branch: string; webhookSecret: () => string; logger: Logger },
): void {
  router.add(serve(api.getGitopsStatus, () => gitops.status()));
  router.add(serve(api.getGitopsDiff, () => gitops.diff()));
  router.add(
    serve(api.postGitopsSync, async (request) => {
      const result = await gitops.sync(request.principal?.name ?? 'anonymous');
      noteForAudit(request, `gitops sync ${result.commit.id}`);
      return result;
    }),
  );
  router.add(
    serve(api.postGitopsWebhook, (request) => {
      checkSignature(options.webhookSecret(), request.bodyBytes, request.headers['x-hub-signature-256']);
      if (request.headers['x-github-event'] === 'ping') return reply(202, { outcome: 'ignored', detail: 'ping' });
      const wanted = `refs/heads/${options.branch}`;
      if (request.body?.ref !== undefined && request.body.ref !== wanted)
        return reply(202, { outcome: 'ignored', detail: `a push to ${request.body.ref}, not ${wanted}` });
      noteForAudit(request, 'gitops webhook: sync started');
      // Senders give up after seconds (GitHub: 10): the sync runs on after the answer.
      gitops.sync('webhook').then(
        (result) => options.logger.info(`GitOps webhook sync applied ${result.commit.id}`),
        (error: Error) =>
          error instanceof ConflictError
            ? options.logger.info(`GitOps webhook: ${error.message}`)
            : options.logger.warn(`GitOps webhook sync failed: ${error.message}`),
      );
      return reply(202, { outcome: 'syncing', detail: `syncing ${options.branch}` });
    }),
  );
}
