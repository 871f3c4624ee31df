import { defineRoute, Permissions, reply, type HttpRouter } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';
import { cookieValue } from './authenticator.js';
import type { OidcLogins, OidcProvider } from './oidc.js';
import { auditBase, overTls, sessionCookie, type AuthRouteDeps } from './session-routes.js';

const STATE_COOKIE = 'runner_oidc_state';
const Params = Type.Object({ provider: Type.String({ minLength: 1 }) });

/** Browser login through an OpenID Connect provider: to the provider, and back with a session cookie. */
export function registerOidcRoutes(
  router: HttpRouter,
  oidc: OidcLogins,
  { authenticator, audit }: AuthRouteDeps,
): void {
  router.add(
    defineRoute({
      method: 'GET',
      path: '/auth/oidc/:provider/login',
      summary: 'Start a login with an OpenID Connect provider (auth.oauth.providers): redirects to it',
      tags: ['auth'],
      permission: Permissions.public,
      params: Params,
      responses: { 302: { description: "to the provider's login page" } },
      handler: async (request) => {
        const { url, state } = await oidc.start(
          request.params.provider,
          `${overTls(request) ? 'https' : 'http'}://${request.headers.host}`,
        );
        // Lax, not Strict: the provider's redirect back is a cross-site navigation that must carry it.
        return reply(302, undefined, {
          location: url,
          'set-cookie': `${STATE_COOKIE}=${state}; Path=/api/v1/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=600`,
        });
      },
    }),
  );

  router.add(
    defineRoute({
      method: 'GET',
      path: '/auth/oidc/:provider/callback',
      summary: 'Where the provider sends the browser back: sets the session cookie and redirects to the web UI',
      tags: ['auth'],
      permission: Permissions.public,
      params: Params,
      responses: { 302: { description: 'to the web UI, logged in' } },
      handler: async (request) => {
        const callback = new URL(
          request.raw.req.url ?? '/',
          `${overTls(request) ? 'https' : 'http'}://${request.headers.host}`,
        );
        const base = { ...auditBase(request), action: `login with ${request.params.provider}` };
        let user;
        try {
          user = await oidc.finish(
            request.params.provider,
            callback,
            cookieValue(request.headers.cookie, STATE_COOKIE),
          );
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
      },
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
  router.add(
    defineRoute({
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
      handler: () => ({ providers: list }),
    }),
  );
}
