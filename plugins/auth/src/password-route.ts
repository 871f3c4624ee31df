import * as api from './api.js';
import {
  serve,
  ForbiddenError,
  InvalidInputError,
  reply,
  UnauthorizedError,
  type HttpRouter,
} from '@runner/plugin-sdk';

import { EXTERNAL_PASSWORD } from './accounts.js';
import { cookieValue, SESSION_COOKIE } from './authenticator.js';
import { auditBase, sessionCookie, type AuthRouteDeps } from './session-routes.js';

/**
 * `POST /auth/me/password`: a user changes their own password (every role may), giving the
 * current one. Every other session of the user ends; the caller's goes on under a new session
 * token (and cookie when it came with one), since the one it used is among those ended.
 */
export function registerPasswordRoute(router: HttpRouter, { accounts, authenticator, audit }: AuthRouteDeps): void {
  router.add(
    serve(api.postAuthMePassword, async (request) => {
      const principal = request.principal;
      if (!principal) throw new UnauthorizedError();
      const base = { ...auditBase(request), user: principal.name, action: 'change own password' };
      const fail = (status: number, error: Error) => {
        audit.record({ ...base, event: 'auth.password_change_failed', result: 'failure', status });
        return error;
      };
      const user =
        principal.method === 'jwt' || principal.method === 'basic' ? accounts.userByName(principal.name) : undefined;
      if (!user)
        throw fail(
          403,
          new ForbiddenError(`${principal.name} is not a user with a password (signed in by ${principal.method})`),
        );
      if (user.password_hash.startsWith('!'))
        throw fail(
          403,
          new ForbiddenError(
            `the password of ${user.name} is kept by ${user.password_hash === EXTERNAL_PASSWORD ? 'the LDAP directory' : 'the OIDC provider'}; change it there`,
          ),
        );
      const { current_password: current, new_password: next } = request.body;
      accounts.passwords.check(next, 'new_password', user.name);
      if (next === current)
        throw fail(
          400,
          new InvalidInputError('the new password is the same as the current one', { field: 'new_password' }),
        );
      try {
        // Checked as a login is: the throttle applies, so this is no way around it.
        await authenticator.login(user.name, current, request.remoteAddress);
      } catch (error) {
        const status = (error as { status?: number }).status ?? 500;
        if (status !== 401) throw fail(status, error as Error);
        throw fail(400, new InvalidInputError('the current password is not right', { field: 'current_password' }));
      }
      const changedAt = Date.now();
      await accounts.setPassword(user.name, next, new Date(changedAt));
      await accounts.endSessionsBefore(user.id, changedAt);
      router.endStreams((p) => p.id === user.id, `the password of ${user.name} was changed`);
      const session = authenticator.issueSession(user);
      audit.record({ ...base, event: 'auth.password_changed', result: 'success', status: 200 });
      const body = {
        token: session.token,
        token_type: 'Bearer' as const,
        expires_at: new Date(session.expires * 1000).toISOString(),
        csrf_token: session.csrf,
      };
      // The browser's session was among those ended: it gets the new one the same way.
      const hadCookie = cookieValue(request.headers.cookie, SESSION_COOKIE) !== undefined;
      return hadCookie
        ? reply(200, body, {
            'set-cookie': sessionCookie(session.token, session.expires - Math.floor(Date.now() / 1000), request),
          })
        : body;
    }),
  );
}
