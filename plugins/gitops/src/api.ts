// The REST routes of GitOps, declared without handlers (see RouteDeclaration): the build writes
// the OpenAPI document and the UI client from them, and the CLI builds `runner gitops` from them.
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { DiffSchema, StatusSchema, SyncSchema, WebhookBody, WebhookSchema } from './schemas.js';

const tags = ['gitops'];

export const getGitopsStatus = declareRoute({
  method: 'GET',
  path: '/gitops/status',
  summary: 'the applied commit, a sync in progress, and the flows edited outside git since (drift)',
  tags,
  permission: Permissions.gitopsView,
  responses: { 200: StatusSchema },
});

export const getGitopsDiff = declareRoute({
  method: 'GET',
  path: '/gitops/diff',
  summary: "what a sync of the branch's head would change (per flow a unified diff), and what would stop it",
  tags,
  permission: Permissions.gitopsView,
  responses: { 200: DiffSchema },
});

export const postGitopsSync = declareRoute({
  method: 'POST',
  path: '/gitops/sync',
  summary: "apply the branch's head, all or nothing: 400 with file:line:column problems, 409 while a sync runs",
  tags,
  permission: Permissions.gitopsSync,
  responses: { 200: SyncSchema, 409: { description: 'a sync is in progress (on this master or another)' } },
});

export const postGitopsWebhook = declareRoute({
  method: 'POST',
  path: '/gitops/webhook',
  summary: "a push notification (GitHub, Gitea, GitLab's X-Hub-Signature-256): starts a sync",
  description:
    'Authenticated by the shared secret, not by a login: the X-Hub-Signature-256 header must be ' +
    'sha256=<HMAC-SHA256 of the raw body under gitops.webhook_secret>. Without that key set the ' +
    'route refuses every call. Answers 202 once the sync started (it runs on), `ignored` for a ' +
    'push to another branch or a ping.',
  tags,
  // The caller holds no login: the signature checked by the handler is its credential.
  permission: Permissions.public,
  body: WebhookBody,
  // GitHub's default content type for a webhook is a form whose `payload` field holds the JSON.
  formField: 'payload',
  bodyLimitBytes: 1024 * 1024,
  responses: { 202: WebhookSchema, 401: { description: 'no signature, or a wrong one' } },
});

export const routes = [getGitopsStatus, getGitopsDiff, postGitopsSync, postGitopsWebhook];
