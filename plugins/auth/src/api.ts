// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, ROLES, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

const UserSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const RoleSchema = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  { description: 'admin, operator, developer or viewer' },
);
const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });
const TokenSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_by: Type.String(),
  created_at: Type.String(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
});
const Digits = Type.String({ pattern: '^[0-9]+$' });
const Params = Type.Object({ provider: Type.String({ minLength: 1 }) });

/**
 * A password being set. Its length is the password policy's to check (auth.password_min_length,
 * 12 by default), not the schema's: a schema minimum would answer its own "length >= 8" before the
 * policy could say what it wants.
 */
const PolicyPassword = Type.String({
  description: 'at least auth.password_min_length characters (12 by default), not a common password',
});

export const postAuthLogin = declareRoute({
  method: 'POST',
  path: '/auth/login',
  summary: 'Log in with a user name and password; returns a session token (JWT) and sets the session cookie',
  tags: ['auth'],
  permission: Permissions.public,
  body: Type.Object({ username: Type.String({ minLength: 1 }), password: Type.String({ minLength: 1 }) }),
  responses: {
    200: Type.Object({
      token: Type.String(),
      token_type: Type.Literal('Bearer'),
      expires_at: Type.String({ format: 'date-time' }),
      csrf_token: Type.String({ description: 'send as x-csrf-token with changes made through the cookie' }),
      user: Type.Object({ name: Type.String(), role: Type.String() }),
    }),
  },
});

export const postAuthLogout = declareRoute({
  method: 'POST',
  path: '/auth/logout',
  summary: 'Revoke the session token of this request (Bearer JWT or the session cookie) and clear the cookie',
  tags: ['auth'],
  permission: Permissions.accountSelf,
  responses: { 200: Type.Object({ logged_out: Type.Boolean() }) },
});

export const getAuthMe = declareRoute({
  method: 'GET',
  path: '/auth/me',
  summary: 'Who the caller is: name, role, how they authenticated, their permissions',
  tags: ['auth'],
  permission: Permissions.accountSelf,
  responses: {
    200: Type.Object({
      name: Type.String(),
      role: Type.String(),
      method: Type.String(),
      permissions: Type.Array(Type.String()),
      csrf_token: Type.Optional(Type.String()),
    }),
  },
});

export const getAuthRoles = declareRoute({
  method: 'GET',
  path: '/auth/roles',
  summary: 'The built-in roles and the permissions each holds (the one table, plugin-sdk permissions.ts)',
  tags: ['auth'],
  permission: Permissions.accountSelf,
  responses: {
    200: Type.Object({
      roles: Type.Array(Type.Object({ name: Type.String(), permissions: Type.Array(Type.String()) })),
      permissions: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
    }),
  },
});

export const postAuthMePassword = declareRoute({
  method: 'POST',
  path: '/auth/me/password',
  summary: 'Change your own password (the current one is asked); your other sessions end',
  description:
    'For users with a password here (not those of a directory or an OIDC provider). A wrong current password counts as a failed login (the same throttle). Session tokens of the user issued before the change stop working; the answer carries a new one for the caller, and sets the session cookie again when the request came with it. API tokens are not sessions and keep working. Recorded in the audit log as `auth.password_changed`.',
  tags: ['auth'],
  permission: Permissions.accountSelf,
  body: Type.Object(
    {
      current_password: Type.String({ minLength: 1 }),
      new_password: PolicyPassword,
    },
    { additionalProperties: false },
  ),
  responses: {
    200: Type.Object({
      token: Type.String({ description: 'a new session token (the others of this user ended)' }),
      token_type: Type.Literal('Bearer'),
      expires_at: Type.String({ format: 'date-time' }),
      csrf_token: Type.String(),
    }),
  },
});

export const getUsers = declareRoute({
  method: 'GET',
  path: '/users',
  summary: 'List users (never their password hashes)',
  tags: ['users'],
  permission: Permissions.userManage,
  responses: { 200: Type.Object({ users: Type.Array(UserSchema), total: Type.Integer() }) },
});

export const postUsers = declareRoute({
  method: 'POST',
  path: '/users',
  summary: 'Add a user; without a password one is generated and returned once',
  tags: ['users'],
  permission: Permissions.userManage,
  body: Type.Object({
    name: Type.String({ minLength: 1 }),
    role: RoleSchema,
    password: Type.Optional(PolicyPassword),
  }),
  responses: { 201: Type.Object({ user: UserSchema, password: Type.Optional(Type.String()) }) },
});

export const deleteUsersName = declareRoute({
  method: 'DELETE',
  path: '/users/:name',
  summary: 'Remove a user (not the last admin, not yourself); their session tokens stop working',
  tags: ['users'],
  permission: Permissions.userManage,
  params: NameParams,
  responses: { 204: { description: 'removed' } },
});

export const putUsersNamePassword = declareRoute({
  method: 'PUT',
  path: '/users/:name/password',
  summary: "Set a user's password; without one a password is generated and returned once",
  tags: ['users'],
  permission: Permissions.userManage,
  params: NameParams,
  body: Type.Object({ password: Type.Optional(PolicyPassword) }),
  responses: { 200: Type.Object({ user: UserSchema, password: Type.Optional(Type.String()) }) },
});

export const putUsersNameRole = declareRoute({
  method: 'PUT',
  path: '/users/:name/role',
  summary: "Change a user's role (the last admin keeps theirs)",
  tags: ['users'],
  permission: Permissions.userManage,
  params: NameParams,
  body: Type.Object({ role: RoleSchema }),
  responses: { 200: Type.Object({ user: UserSchema }) },
});

export const getAuthTokens = declareRoute({
  method: 'GET',
  path: '/auth/tokens',
  summary: 'List API tokens (names, roles, expiry; never the tokens)',
  tags: ['auth'],
  permission: Permissions.tokenManage,
  responses: { 200: Type.Object({ tokens: Type.Array(TokenSchema), total: Type.Integer() }) },
});

export const postAuthTokens = declareRoute({
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
});

export const deleteAuthTokensName = declareRoute({
  method: 'DELETE',
  path: '/auth/tokens/:name',
  summary: 'Revoke an API token by name',
  tags: ['auth'],
  permission: Permissions.tokenManage,
  params: NameParams,
  responses: { 204: { description: 'revoked' } },
});

export const getAudit = declareRoute({
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
});

export const getAuthOidcProviderLogin = declareRoute({
  method: 'GET',
  path: '/auth/oidc/:provider/login',
  summary: 'Start a login with an OpenID Connect provider (auth.oauth.providers): redirects to it',
  tags: ['auth'],
  permission: Permissions.public,
  params: Params,
  responses: { 302: { description: "to the provider's login page" } },
});

export const getAuthOidcProviderCallback = declareRoute({
  method: 'GET',
  path: '/auth/oidc/:provider/callback',
  summary: 'Where the provider sends the browser back: sets the session cookie and redirects to the web UI',
  tags: ['auth'],
  permission: Permissions.public,
  params: Params,
  responses: { 302: { description: 'to the web UI, logged in' } },
});

export const getAuthProviders = declareRoute({
  method: 'GET',
  path: '/auth/providers',
  summary: 'The OpenID Connect providers a user may sign in with (names only), for the login page',
  tags: ['auth'],
  permission: Permissions.public,
  responses: {
    200: Type.Object({
      providers: Type.Array(
        Type.Object({
          name: Type.String(),
          display_name: Type.String(),
          login_url: Type.String({ description: 'where a browser starts the login (a redirect to the provider)' }),
        }),
      ),
    }),
  },
});

/** Every route above, for the plugin's definition. */
export const routes = [
  postAuthLogin,
  postAuthLogout,
  getAuthMe,
  getAuthRoles,
  postAuthMePassword,
  getUsers,
  postUsers,
  deleteUsersName,
  putUsersNamePassword,
  putUsersNameRole,
  getAuthTokens,
  postAuthTokens,
  deleteAuthTokensName,
  getAudit,
  getAuthOidcProviderLogin,
  getAuthOidcProviderCallback,
  getAuthProviders,
];
