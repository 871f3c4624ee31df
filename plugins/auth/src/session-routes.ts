import * as api from './api.js';
import {
  serve,
  PERMISSION_DESCRIPTIONS,
  Permissions,
  ROLE_PERMISSIONS,
  ROLES,
  reply,
  roleAllows,
  UnauthorizedError,
  type HttpRequest,
  type HttpRouter,
} from '@runner/plugin-sdk';

import type { Accounts } from './accounts.js';
import type { AuditLog } from './audit-log.js';
import { cookieValue, SESSION_COOKIE, type Authenticator } from './authenticator.js';
import { USER_NAME } from './accounts.js';

export interface AuthRouteDeps {
  accounts: Accounts;
  authenticator: Authenticator;
  audit: AuditLog;
}

/** Where an audit record about this request says it came from. */
export function auditBase(request: Pick<HttpRequest, 'remoteAddress' | 'requestId' | 'method' | 'path'>) {
  return {
    ip: request.remoteAddress,
    resource: `/api/v1${request.path}`,
    request_id: request.requestId,
  };
}

/** The session token a request carries (Bearer JWT or the UI's cookie), for logout. */
function sessionTokenOf(request: HttpRequest): string | undefined {
  const header = request.headers.authorization;
  if (header?.toLowerCase().startsWith('bearer ')) {
    const value = header.slice(7).trim();
    return value.startsWith('rnr_') ? undefined : value;
  }
  return cookieValue(request.headers.cookie, SESSION_COOKIE);
}

export function sessionCookie(value: string, maxAgeSeconds: number, request: HttpRequest): string {
  // HttpOnly: page scripts cannot read it; SameSite=Strict: other sites' pages do not send it;
  // Secure over HTTPS: the browser never sends it back in clear.
  const secure = overTls(request) ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/** Whether the request came over HTTPS (runner server --tls-cert). */
export function overTls(request: HttpRequest): boolean {
  return (request.raw.req.socket as { encrypted?: boolean }).encrypted === true;
}

/** Login, logout and who-am-I. */
export function registerSessionRoutes(router: HttpRouter, { authenticator, audit }: AuthRouteDeps): void {
  router.add(
    serve(api.postAuthLogin, async (request) => {
      const { username, password } = request.body;
      // What was typed as a user name is kept only if it could be one: a password typed into the
      // name field must not land in the audit log.
      const base = { ...auditBase(request), user: auditableUserName(username), action: 'login' };
      let user;
      try {
        user = await authenticator.login(username, password, request.remoteAddress);
      } catch (error) {
        const status = (error as { status?: number }).status ?? 500;
        audit.record({ ...base, event: 'auth.login_failed', result: 'failure', status });
        throw error;
      }
      const session = authenticator.issueSession(user);
      audit.record({ ...base, event: 'auth.login', result: 'success', status: 200 });
      const expiresAt = new Date(session.expires * 1000).toISOString();
      return reply(
        200,
        {
          token: session.token,
          token_type: 'Bearer',
          expires_at: expiresAt,
          csrf_token: session.csrf,
          user: { name: user.name, role: user.role },
        },
        { 'set-cookie': sessionCookie(session.token, session.expires - Math.floor(Date.now() / 1000), request) },
      );
    }),
  );

  router.add(
    serve(api.postAuthLogout, async (request) => {
      const token = sessionTokenOf(request);
      let revoked = false;
      if (token) {
        const { jti, expires } = authenticator.session(token);
        await authenticator.revoke(jti, expires);
        router.endStreams((p) => p.method === 'jwt' && p.session === jti, 'logged out');
        revoked = true;
      }
      audit.record({
        ...auditBase(request),
        event: 'auth.logout',
        user: request.principal?.name ?? 'anonymous',
        action: 'logout',
        result: 'success',
        status: 200,
      });
      return reply(200, { logged_out: revoked }, { 'set-cookie': sessionCookie('', 0, request) });
    }),
  );

  router.add(
    serve(api.getAuthMe, (request) => {
      const principal = request.principal;
      if (!principal) throw new UnauthorizedError();
      const permissions = Object.values(Permissions).filter((p) => p !== Permissions.public);
      const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
      // The UI reloads without the login answer: it finds its CSRF token here.
      const csrf = principal.method === 'jwt' && cookie ? authenticator.csrfOf(cookie) : undefined;
      return {
        name: principal.name,
        role: principal.role,
        method: principal.method,
        permissions: permissions.filter((p) => roleAllows(principal.role, p)),
        ...(csrf ? { csrf_token: csrf } : {}),
      };
    }),
  );

  router.add(serve(api.getAuthRoles, () => rolesTable()));
}

/** Every role (highest first) with its permissions, admin's listed in full, and what each permission allows. */
export function rolesTable() {
  const every = Object.values(Permissions).filter((p) => p !== Permissions.public);
  return {
    roles: [...ROLES].reverse().map((name) => {
      const granted = ROLE_PERMISSIONS[name];
      return { name, permissions: granted === '*' ? every : granted.filter((p) => p !== Permissions.public) };
    }),
    permissions: every.map((name) => ({ name, description: PERMISSION_DESCRIPTIONS[name] ?? '' })),
  };
}

/** A login's user name as the audit log keeps it: itself when it could be a user name, else a placeholder. */
export function auditableUserName(name: string): string {
  return USER_NAME.test(name) ? name : '(not a valid user name)';
}
