import * as api from './api.js';
import { serve, reply, type HttpRouter } from '@runner/plugin-sdk';

import { cookieValue } from './authenticator.js';
import type { OidcLogins, OidcProvider } from './oidc.js';
import { auditBase, overTls, sessionCookie, type AuthRouteDeps } from './session-routes.js';

const STATE_COOKIE = 'runner_oidc_state';

/** Browser login through an OpenID Connect provider: to the provider, and back with a session cookie. */
export function registerOidcRoutes(
  router: HttpRouter,
  oidc: OidcLogins,
  { authenticator, audit }: AuthRouteDeps,
): void {
  router.add(
    serve(api.getAuthOidcProviderLogin, async (request) => {
      const { url, state } = await oidc.start(
        request.params.provider,
        `${overTls(request) ? 'https' : 'http'}://${request.headers.host}`,
      );
      // Lax, not Strict: the provider's redirect back is a cross-site navigation that must carry it.
      return reply(302, undefined, {
        location: url,
        'set-cookie': `${STATE_COOKIE}=${state}; Path=/api/v1/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=600`,
      });
    }),
  );

  router.add(
    serve(api.getAuthOidcProviderCallback, async (request) => {
      const callback = new URL(
        request.raw.req.url ?? '/',
        `${overTls(request) ? 'https' : 'http'}://${request.headers.host}`,
      );
      const base = { ...auditBase(request), action: `login with ${request.params.provider}` };
      let user;
      try {
        user = await oidc.finish(request.params.provider, callback, cookieValue(request.headers.cookie, STATE_COOKIE));
      } catch (error) {
        const status = (error as { status?: number }).status ?? 500;
        audit.record({ ...base, user: 'anonymous', event: 'auth.login_failed', result: 'failure', status });
        throw error;
      }
      const session = authenticator.issueSession(user);
      audit.record({ ...base, user: user.name, event: 'auth.login', result: 'success', status: 302 });
      return reply(302, undefined, {
        location: '/',
        'set-cookie': sessionCookie(session.token, session.expires - Math.floor(Date.now() / 1000), request),
      });
    }),
  );
}

/**
 * `GET /auth/providers`, public: the login page shows a button per configured provider. Names and
 * display names only (never the issuer's client secret), with where the button leads.
 */
export function registerProvidersRoute(router: HttpRouter, providers: readonly OidcProvider[]): void {
  const list = providers.map((p) => ({
    name: p.name,
    display_name: p.displayName,
    login_url: `/api/v1/auth/oidc/${p.name}/login`,
  }));
  router.add(serve(api.getAuthProviders, () => ({ providers: list })));
}
