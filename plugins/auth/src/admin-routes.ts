import * as api from './api.js';
import {
  serve,
  ConflictError,
  InvalidInputError,
  parseDuration,
  reply,
  type HttpRequest,
  type HttpRouter,
} from '@runner/plugin-sdk';

import { checkRole, publicToken, publicUser } from './accounts.js';
import { randomPassword } from './passwords.js';
import { auditBase, type AuthRouteDeps } from './session-routes.js';

/** Users, API tokens and the audit log: admin only (user:manage, token:manage, audit:view). */
export function registerAdminRoutes(router: HttpRouter, { accounts, audit }: AuthRouteDeps): void {
  /** An admin action's own record, beside the `api.call` the audit guard writes. */
  const adminAction = (request: HttpRequest, event: string, action: string) =>
    audit.record({
      ...auditBase(request),
      event,
      user: request.principal?.name ?? 'anonymous',
      action,
      result: 'success',
      status: 200,
    });

  router.add(
    serve(api.getUsers, () => {
      const users = accounts.users().map(publicUser);
      return { users, total: users.length };
    }),
  );

  router.add(
    serve(api.postUsers, async (request) => {
      const generated = request.body.password === undefined ? randomPassword() : undefined;
      const user = await accounts.addUser(
        request.body.name,
        checkRole(request.body.role),
        request.body.password ?? generated!,
        new Date(),
      );
      adminAction(request, 'user.add', `add user ${user.name} (${user.role})`);
      return reply(201, { user: publicUser(user), ...(generated ? { password: generated } : {}) });
    }),
  );

  router.add(
    serve(api.deleteUsersName, async (request) => {
      // A session removing its own user would end itself mid-change and could leave no one who
      // knows what was meant: another admin does it. (An API token is not the user of its name.)
      if (request.principal?.method !== 'token' && request.principal?.name === request.params.name)
        throw new ConflictError(
          `cannot remove "${request.params.name}": it is you; another admin can remove this user`,
          {
            details: { user: request.params.name },
          },
        );
      const removed = await accounts.removeUser(request.params.name);
      router.endStreams((p) => p.id === removed.id, `user ${removed.name} was removed`);
      adminAction(request, 'user.remove', `remove user ${request.params.name}`);
      return undefined;
    }),
  );

  router.add(
    serve(api.putUsersNamePassword, async (request) => {
      const generated = request.body.password === undefined ? randomPassword() : undefined;
      const changedAt = Date.now();
      const user = await accounts.setPassword(
        request.params.name,
        request.body.password ?? generated!,
        new Date(changedAt),
      );
      // A reset is for a password that may be known to someone else: every session of the user
      // ends, and with them what they hold open.
      await accounts.endSessionsBefore(user.id, changedAt + 1);
      router.endStreams((p) => p.id === user.id, `the password of ${user.name} was reset`);
      adminAction(request, 'user.passwd', `set the password of ${user.name}`);
      return { user: publicUser(user), ...(generated ? { password: generated } : {}) };
    }),
  );

  router.add(
    serve(api.putUsersNameRole, async (request) => {
      const user = await accounts.setRole(request.params.name, checkRole(request.body.role), new Date());
      adminAction(request, 'user.role', `set the role of ${user.name} to ${user.role}`);
      return { user: publicUser(user) };
    }),
  );

  router.add(
    serve(api.getAuthTokens, () => {
      const tokens = accounts.tokens().map(publicToken);
      return { tokens, total: tokens.length };
    }),
  );

  router.add(
    serve(api.postAuthTokens, async (request) => {
      const now = new Date();
      let expiresAt: Date | null = null;
      if (request.body.expires !== undefined) {
        let ms: number;
        try {
          ms = parseDuration(request.body.expires);
        } catch (error) {
          throw new InvalidInputError(`expires: ${(error as Error).message}`, { field: 'expires' });
        }
        if (ms <= 0) throw new InvalidInputError('expires must be above zero', { field: 'expires' });
        expiresAt = new Date(now.getTime() + ms);
      }
      const { token, secret } = await accounts.addToken(
        request.body.name,
        checkRole(request.body.role),
        request.principal?.name ?? 'anonymous',
        expiresAt,
        now,
      );
      adminAction(request, 'token.create', `create API token ${token.name} (${token.role})`);
      return reply(201, { token: secret, info: publicToken(token) });
    }),
  );

  router.add(
    serve(api.deleteAuthTokensName, async (request) => {
      const revoked = await accounts.revokeToken(request.params.name);
      router.endStreams((p) => p.method === 'token' && p.id === revoked.id, `API token ${revoked.name} was revoked`);
      adminAction(request, 'token.revoke', `revoke API token ${request.params.name}`);
      return undefined;
    }),
  );

  router.add(
    serve(api.getAudit, async (request) => {
      const q = request.query;
      const limit = q.limit === undefined ? 100 : Number(q.limit);
      if (limit < 1 || limit > 1000) throw new InvalidInputError('limit must be from 1 to 1000', { field: 'limit' });
      const offset = q.offset === undefined ? 0 : Number(q.offset);
      const result = await audit.list({
        user: q.user,
        event: q.event,
        result: q.result,
        since: q.since === undefined ? undefined : timeOrAgo(q.since, 'since'),
        until: q.until === undefined ? undefined : timeOrAgo(q.until, 'until'),
        after_id: q.after_id === undefined ? undefined : Number(q.after_id),
        limit,
        offset,
      });
      return { ...result, limit, offset };
    }),
  );
}

/** An ISO time as given, or a duration (`1h`) as that long before now. */
function timeOrAgo(value: string, field: string): string {
  if (/^\d{4}-\d\d-\d\d/.test(value)) {
    const time = Date.parse(value);
    if (Number.isNaN(time)) throw new InvalidInputError(`${field}: "${value}" is not an ISO 8601 time`, { field });
    return new Date(time).toISOString();
  }
  try {
    return new Date(Date.now() - parseDuration(value)).toISOString();
  } catch (error) {
    throw new InvalidInputError(`${field}: ${(error as Error).message} (or an ISO 8601 time)`, { field });
  }
}
