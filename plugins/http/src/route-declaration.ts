import { Permissions, type RouteMeta, type RouteSpec } from '@runner/plugin-sdk';
import type { PartValidator } from './route-schema.js';

// What the router keeps of a declaration, and the checks a declaration must pass at setup.

export const API_PREFIX = '/api/v1';
export const METHODS: readonly RouteSpec['method'][] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A declared route with its checks compiled. */
export interface CompiledRoute {
  spec: RouteSpec;
  meta: RouteMeta;
  bodyLimit: number;
  params?: PartValidator;
  query?: PartValidator;
  body?: PartValidator;
}

/** The WebSocket channel as the guard chain sees it: any signed-in user may connect; messages are filtered by permission. */
export const WEBSOCKET_ROUTE: RouteMeta = {
  method: 'WS',
  path: `${API_PREFIX}/ws`,
  permission: Permissions.workflowView,
  summary: 'the WebSocket channel of live events',
  kind: 'websocket',
  mutating: false,
};

/** A mistake in a plugin's declaration fails its setup, naming the route. */
export function checkDeclaration(route: RouteSpec): void {
  const { method, path } = route;
  if (!METHODS.includes(method))
    throw new TypeError(`route ${method} ${path}: method must be one of ${METHODS.join(', ')}`);
  if (!path.startsWith('/') || path.includes('?'))
    throw new TypeError(`route ${method} ${path}: path must start with "/" and hold no query, e.g. "/agents/:name"`);
  if (typeof route.permission !== 'string' || (route.permission as string) === '')
    throw new TypeError(`route ${method} ${path} declares no permission (use "public" for open routes)`);
  if (!route.summary)
    throw new TypeError(`route ${method} ${path} has no summary (it is shown in the OpenAPI document)`);
  if (typeof route.handler !== 'function') throw new TypeError(`route ${method} ${path} has no handler`);
  const named = [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
  const declared = Object.keys((route.params?.properties ?? {}) as object);
  const missing = named.filter((n) => route.params && !declared.includes(n));
  if (missing.length > 0) throw new TypeError(`route ${method} ${path}: params schema lacks ${missing.join(', ')}`);
}
