import {
  HttpRouterRef,
  Permissions,
  WebSocketHubRef,
  type HttpMethod,
  type HttpRequest,
  type HttpRouter,
  type RouteSpec,
  type WebSocketHub,
} from '@runner/plugin-sdk';
import { createTestKernel, type TestKernel } from '@runner/plugin-sdk/testing';
import { afterEach } from 'vitest';
import { plugin } from './plugin.js';

export interface RunningHttp {
  kernel: TestKernel;
  router: HttpRouter;
  hub: WebSocketHub;
  /** `http://127.0.0.1:<port>` */
  base: string;
  port: number;
}

/**
 * Sets the plugin up in a test kernel on an ephemeral loopback port. `routes` runs before
 * `ready`, where a plugin's setup would add its routes.
 */
export async function startHttp(
  config: Record<string, unknown> = {},
  routes?: (router: HttpRouter) => void,
  dataDir?: string,
): Promise<RunningHttp> {
  const kernel = await createTestKernel({
    plugins: [plugin],
    profile: 'master',
    dataDir,
    config: { 'http.port': 0, 'http.bind_address': '127.0.0.1', ...config },
  });
  const router = kernel.get(HttpRouterRef);
  routes?.(router);
  await kernel.ready();
  const address = router.address();
  if (!address) throw new Error('the router has no address after ready');
  return {
    kernel,
    router,
    hub: kernel.get(WebSocketHubRef),
    base: `http://127.0.0.1:${address.port}`,
    port: address.port,
  };
}

/** A route for tests: public, summarised by its method and path, with no schemas unless given. */
export function testRoute(
  method: HttpMethod,
  path: string,
  handler: (request: HttpRequest) => unknown,
  extra: Partial<RouteSpec> = {},
): RouteSpec {
  return {
    method,
    path,
    summary: `${method} ${path} (test)`,
    permission: Permissions.public,
    responses: { 200: { description: 'test answer' } },
    handler: handler as RouteSpec['handler'],
    ...extra,
  };
}

/**
 * A test file's `start(routes)`: a server with default config and the given routes, stopped after
 * each test (call at the top level of the file).
 */
export function serverPerTest(): (routes: (router: HttpRouter) => void) => Promise<RunningHttp> {
  const running: RunningHttp[] = [];
  afterEach(async () => {
    for (const r of running.splice(0)) await r.kernel.stop();
  });
  return async (routes) => {
    const r = await startHttp({}, routes);
    running.push(r);
    return r;
  };
}
