import {
  defineRoute,
  InvalidInputError,
  parseDuration,
  Permissions,
  reply,
  ROLES,
  type HttpRequest,
  type HttpRouter,
} from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { checkRole, publicToken, publicUser } from './accounts.js';
import { randomPassword } from './passwords.js';
import { auditBase, type AuthRouteDeps } from './session-routes.js';

const RoleSchema = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  { description: 'admin, operator, developer or viewer' },
);
const UserSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const TokenSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_by: Type.String(),
  created_at: Type.String(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
});
const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });
const Digits = Type.String({ pattern: '^[0-9]+$' });

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
    defineRoute({
      method: 'GET',
      path: '/users',
      summary: 'List users (never their password hashes)',
      tags: ['users'],
      permission: Permissions.userManage,
      responses: { 200: Type.Object({ users: Type.Array(UserSchema), total: Type.Integer() }) },
      handler: () => {
        const users = accounts.users().map(publicUser);
        return { users, total: users.length };
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'POST',
      path: '/users',
      summary: 'Add a user; without a password one is generated and returned once',
      tags: ['users'],
      permission: Permissions.userManage,
      body: Type.Object({
        name: Type.String({ minLength: 1 }),
        role: RoleSchema,
        password: Type.Optional(Type.String({ minLength: 8 })),
      }),
      responses: { 201: Type.Object({ user: UserSchema, password: Type.Optional(Type.String()) }) },
      handler: async (request) => {
        const generated = request.body.password === undefined ? randomPassword() : undefined;
        const user = await accounts.addUser(
          request.body.name,
          checkRole(request.body.role),
          request.body.password ?? generated!,
          new Date(),
        );
        adminAction(request, 'user.add', `add user ${user.name} (${user.role})`);
        return reply(201, { user: publicUser(user), ...(generated ? { password: generated } : {}) });
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'DELETE',
      path: '/users/:name',
      summary: 'Remove a user (not the last admin); their session tokens stop working',
      tags: ['users'],
      permission: Permissions.userManage,
      params: NameParams,
      responses: { 204: { description: 'removed' } },
      handler: async (request) => {
        const removed = await accounts.removeUser(request.params.name);
        router.endStreams((p) => p.id === removed.id, `user ${removed.name} was removed`);
        adminAction(request, 'user.remove', `remove user ${request.params.name}`);
        return undefined;
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'PUT',
      path: '/users/:name/password',
      summary: "Set a user's password; without one a password is generated and returned once",
      tags: ['users'],
      permission: Permissions.userManage,
      params: NameParams,
      body: Type.Object({ password: Type.Optional(Type.String({ minLength: 8 })) }),
      responses: { 200: Type.Object({ user: UserSchema, password: Type.Optional(Type.String()) }) },
      handler: async (request) => {
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
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'PUT',
      path: '/users/:name/role',
      summary: "Change a user's role (the last admin keeps theirs)",
      tags: ['users'],
      permission: Permissions.userManage,
      params: NameParams,
      body: Type.Object({ role: RoleSchema }),
      responses: { 200: Type.Object({ user: UserSchema }) },
      handler: async (request) => {
        const user = await accounts.setRole(request.params.name, checkRole(request.body.role), new Date());
        adminAction(request, 'user.role', `set the role of ${user.name} to ${user.role}`);
        return { user: publicUser(user) };
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/auth/tokens',
      summary: 'List API tokens (names, roles, expiry; never the tokens)',
      tags: ['auth'],
      permission: Permissions.tokenManage,
      responses: { 200: Type.Object({ tokens: Type.Array(TokenSchema), total: Type.Integer() }) },
      handler: () => {
        const tokens = accounts.tokens().map(publicToken);
        return { tokens, total: tokens.length };
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'POST',
      path: '/auth/tokens',
      summary: 'Create an API token for CI; the token is in this answer only (the master keeps its hash)',
      tags: ['auth'],
      permission: Permissions.tokenManage,
      body: Type.Object({
        name: Type.String({ minLength: 1 }),
        role: RoleSchema,
        expires: Type.Optional(Type.String({ description: 'lifetime, e.g. 90d; none: no expiry' })),
      }),
      responses: { 201: Type.Object({ token: Type.String(), info: TokenSchema }) },
      handler: async (request) => {
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
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'DELETE',
      path: '/auth/tokens/:name',
      summary: 'Revoke an API token by name',
      tags: ['auth'],
      permission: Permissions.tokenManage,
      params: NameParams,
      responses: { 204: { description: 'revoked' } },
      handler: async (request) => {
        const revoked = await accounts.revokeToken(request.params.name);
        router.endStreams((p) => p.method === 'token' && p.id === revoked.id, `API token ${revoked.name} was revoked`);
        adminAction(request, 'token.revoke', `revoke API token ${request.params.name}`);
        return undefined;
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/audit',
      summary: 'Audit records, newest first (with after_id: oldest first, for following)',
      tags: ['audit'],
      permission: Permissions.auditView,
      query: Type.Object({
        user: Type.Optional(Type.String()),
        event: Type.Optional(Type.String()),
        result: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
        since: Type.Optional(Type.String({ description: 'ISO 8601 time, or a duration back from now (1h, 7d)' })),
        until: Type.Optional(Type.String({ description: 'ISO 8601 time' })),
        after_id: Type.Optional(Digits),
        limit: Type.Optional(Digits),
        offset: Type.Optional(Digits),
      }),
      responses: {
        200: Type.Object({
          records: Type.Array(Type.Object({}, { additionalProperties: true })),
          total: Type.Integer(),
          limit: Type.Integer(),
          offset: Type.Integer(),
        }),
      },
      handler: (request) => {
        const q = request.query;
        const limit = q.limit === undefined ? 100 : Number(q.limit);
        if (limit < 1 || limit > 1000) throw new InvalidInputError('limit must be from 1 to 1000', { field: 'limit' });
        const offset = q.offset === undefined ? 0 : Number(q.offset);
        const result = audit.list({
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
      },
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
