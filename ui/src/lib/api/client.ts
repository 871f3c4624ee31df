import createClient, { type Middleware } from 'openapi-fetch';
import { apiError } from './errors';
import type { paths } from './schema';

/**
 * The typed REST client. Its types are generated from the master's OpenAPI document
 * (`npm run openapi:types -w ui`, see ui/README.md); nothing here restates a response shape.
 * Same origin: the session cookie goes along.
 */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

let onUnauthorized: (() => void) | undefined;
let csrfToken: string | undefined;

/** The session's CSRF token (from login or /auth/me), sent with every change made through the cookie. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** The session registers what a 401 means (back to the login page). */
export function handleUnauthorized(callback: () => void): void {
  onUnauthorized = callback;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

const session: Middleware = {
  onRequest({ request }) {
    if (csrfToken && !SAFE.has(request.method)) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    const path = new URL(request.url).pathname;
    if (response.status === 401 && !path.startsWith('/api/v1/auth/')) onUnauthorized?.();
    return undefined;
  },
};
api.use(session);

/**
 * The data of a call, or an ApiError with the API's message:
 * `const agents = await data(api.GET('/api/v1/agents'))`.
 */
export async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data: body, error, response } = await call;
  if (!response.ok) throw apiError(error, response);
  return body as T;
}
