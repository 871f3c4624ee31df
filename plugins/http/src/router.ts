import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  ForbiddenError,
  messageOf,
  NotFoundError,
  RunnerError,
  type Guard,
  type HttpRouter,
  type Logger,
  type PlainRoute,
  type Principal,
  type Redactor,
  type RouteMeta,
  type RouteSpec,
  type StaticMount,
  type WebSocketRoute,
  buildOpenApi,
} from '@runner/plugin-sdk';
import polka, { type NextHandler, type Polka, type Request } from 'polka';
import { EncodedBodies, isEncodedJson, writeEncoded } from './encoded-body.js';
import { errorAnswer, MethodNotAllowedError } from './errors.js';
import { finalStatus, GuardChain } from './guard-chain.js';
import { dispatchRoute, NO_HEADERS, type DispatchPipeline } from './api-dispatch.js';
import { hasRequestBody } from './json-body.js';
import { LiveStreams } from './live-streams.js';
import { originAllowed, securityHeaders } from './network-checks.js';
import { API_PREFIX, checkDeclaration, METHODS, WEBSOCKET_ROUTE, type CompiledRoute } from './route-declaration.js';
import { compilePart } from './route-schema.js';
import { pathOf, QueryStrings, requestIdOf, searchOf } from './request-parts.js';

export { API_PREFIX } from './route-declaration.js';
export { requestIdOf } from './request-parts.js';
import { StaticFiles } from './static-files.js';
import { WebSocketRoutes } from './websocket-routes.js';

const DEFAULT_ALLOWED_HEADERS = 'content-type, authorization, x-request-id';

export interface ApiRouterOptions {
  logger: Logger;
  /** Masks registered secrets in every JSON answer, errors included. */
  redactor?: Redactor;
  bodyLimitBytes: number;
  corsOrigins: readonly string[];
}

/**
 * The HttpRouter service: declared routes under /api/v1 on polka with their schemas checked, the
 * guard chain in front of every door (API, SSE, WebSocket, plain routes, static files), static
 * mounts and plain routes outside the API, the OpenAPI document, CORS, request ids, request
 * logging, and the mapping of every failure to the documented error body.
 */
export class ApiRouter implements HttpRouter {
  private readonly app: Polka;
  private readonly registered = new Set<string>();
  private readonly declared: RouteSpec[] = [];
  private readonly metas: RouteMeta[] = [];
  private readonly guards = new GuardChain();
  /** Open WebSocket and server-sent event answers, ended when their credential is revoked. */
  readonly streams = new LiveStreams();
  /** WebSocket endpoints plugins own (webSocket); the server's upgrade listener asks them before the hub. */
  readonly webSockets: WebSocketRoutes;
  private readonly queries = new QueryStrings();
  /** What dispatchRoute needs of the router: its guards and its two ways of answering. */
  private readonly pipeline: DispatchPipeline = {
    guards: this.guards,
    writeJson: (req, res, status, body, headers) => this.writeJson(req, res, status, body, headers),
    sendError: (req, res, error) => this.sendError(req, res, error),
    streams: this.streams,
  };
  private readonly statics: StaticFiles[] = [];
  private readonly plainRoutes = new Map<string, { route: PlainRoute; meta: RouteMeta }>();
  private readonly allowAllOrigins: boolean;
  private readonly encoded: EncodedBodies;
  /** Routes without path parameters by `METHOD /api/v1/path`. */
  private readonly exact = new Map<string, CompiledRoute>();
  private listeningOn: { host: string; port: number; tls?: boolean } | null = null;

  constructor(private readonly options: ApiRouterOptions) {
    this.allowAllOrigins = options.corsOrigins.includes('*');
    this.encoded = new EncodedBodies(options.redactor);
    this.app = polka({
      onNoMatch: (req, res) => this.sendError(req, res, this.noRouteError(req.method, req.path)),
      onError: (error, req, res) => this.sendError(req, res, error),
    });
    this.metas.push(WEBSOCKET_ROUTE);
    this.webSockets = new WebSocketRoutes({
      logger: options.logger,
      corsOrigins: options.corsOrigins,
      authorize: (meta, req, socket, requestId) => this.guards.run(meta, req, requestId, socket, () => 101),
      track: (principal, end) => this.streams.track(principal, end),
    });
  }

  webSocket(route: WebSocketRoute): void {
    this.metas.push(this.webSockets.add(route));
  }

  trackPrincipal(principal: Principal, end: (reason: string) => void): () => void {
    return this.streams.track(principal, end);
  }

  add(route: RouteSpec<any, any, any>): void {
    const { method, path } = route;
    checkDeclaration(route);
    // `/a/:x` and `/a/:y` match the same requests, so parameter names do not make routes distinct.
    const shape = `${method} ${path.replace(/:[^/]+/g, ':').replace(/\/$/, '')}`;
    if (this.registered.has(shape)) throw new TypeError(`route ${method} ${API_PREFIX}${path} is already registered`);
    this.registered.add(shape);
    const meta: RouteMeta = {
      method,
      path: `${API_PREFIX}${path}`,
      permission: route.permission,
      summary: route.summary,
      kind: route.streaming ? 'sse' : 'api',
      mutating: method !== 'GET',
    };
    const compiled: CompiledRoute = {
      spec: route,
      meta,
      bodyLimit: route.bodyLimitBytes ?? this.options.bodyLimitBytes,
      params: route.params ? compilePart('params', route.params) : undefined,
      query: route.query ? compilePart('query', route.query) : undefined,
      body: route.body ? compilePart('body', route.body) : undefined,
    };
    this.declared.push(route);
    this.metas.push(meta);
    // A path without parameters is found by a map read instead of polka testing every route's
    // pattern (about a hundred regular expressions a request). Only when no route added before it
    // matches the same path, so the route polka would have run first is the one found.
    if (!meta.path.includes(':') && this.app.find(method, meta.path).handlers.length === 0)
      this.exact.set(`${method} ${meta.path}`, compiled);
    this.app.add(method, meta.path, (req: Request, res: ServerResponse) =>
      dispatchRoute(this.pipeline, req, res, compiled),
    );
  }

  guard(guard: Guard): void {
    this.guards.add(guard);
  }

  mountStatic(mount: StaticMount): void {
    if (!mount.prefix.startsWith('/') || mount.prefix.startsWith(API_PREFIX))
      throw new TypeError(`static mount ${mount.prefix}: the prefix must start with "/" and lie outside ${API_PREFIX}`);
    if (this.statics.some((s) => s.mount.prefix === mount.prefix))
      throw new TypeError(`static mount ${mount.prefix} is already registered`);
    this.statics.push(new StaticFiles(mount));
    // The longest prefix wins, so `/docs` can sit beside the UI at `/`.
    this.statics.sort((a, b) => b.mount.prefix.length - a.mount.prefix.length);
    this.metas.push({
      method: 'GET',
      path: mount.prefix,
      permission: mount.permission,
      summary: `static files from ${mount.dir}`,
      kind: 'static',
      mutating: false,
    });
  }

  plain(route: PlainRoute): void {
    if (!route.path.startsWith('/') || route.path.startsWith('/api/'))
      throw new TypeError(`plain route ${route.path}: the path must start with "/" and lie outside /api/`);
    if (!route.permission) throw new TypeError(`plain route ${route.method} ${route.path} declares no permission`);
    const key = `${route.method} ${route.path}`;
    if (this.plainRoutes.has(key)) throw new TypeError(`plain route ${key} is already registered`);
    const meta: RouteMeta = {
      method: route.method,
      path: route.path,
      permission: route.permission,
      summary: route.summary,
      kind: 'plain',
      mutating: route.method !== 'GET',
    };
    this.plainRoutes.set(key, { route, meta });
    this.metas.push(meta);
  }

  routes(): readonly RouteMeta[] {
    return this.metas;
  }

  /** The OpenAPI 3.1 document of every declared and plain route. */
  openApi(version: string): Record<string, unknown> {
    return buildOpenApi({
      version,
      apiPrefix: API_PREFIX,
      routes: this.declared,
      plain: [...this.plainRoutes.values()].map((p) => p.route),
    });
  }

  /**
   * Runs the guard chain for a WebSocket upgrade; the WebSocket hub calls it before accepting.
   * Throws the refusal; resolves with the principal the guards established.
   */
  authorizeUpgrade(req: IncomingMessage, socket: Duplex, requestId: string): Promise<Principal | undefined> {
    return this.guards.run(WEBSOCKET_ROUTE, req, requestId, socket, () => 101);
  }

  address(): { host: string; port: number; tls?: boolean } | null {
    return this.listeningOn;
  }

  endStreams(match: (principal: Principal) => boolean, reason: string): number {
    return this.streams.end(match, reason);
  }

  /** Degraded parts by source, for GET /api/v1/health (see HttpRouter.reportCondition). */
  private readonly degraded = new Map<string, { reason: string; since: string }>();

  reportCondition(source: string, reason: string | null): void {
    if (reason === null) this.degraded.delete(source);
    else if (this.degraded.get(source)?.reason !== reason) {
      this.degraded.set(source, { reason, since: new Date().toISOString() });
    }
  }

  /** The parts reported degraded now, oldest first. */
  conditions(): { source: string; reason: string; since: string }[] {
    return [...this.degraded].map(([source, c]) => ({ source, ...c }));
  }

  /** Set by the server once it listens. */
  setAddress(address: { host: string; port: number; tls?: boolean } | null): void {
    this.listeningOn = address;
  }

  /** The server's `request` listener. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = process.hrtime.bigint();
    const path = pathOf(req.url);
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    res.setHeader('x-content-type-options', 'nosniff');
    const tls = (req.socket as { encrypted?: boolean }).encrypted === true;
    for (const [name, value] of securityHeaders(path, tls)) res.setHeader(name, value);
    res.on('close', () => {
      this.options.logger.debug('http request', {
        request_id: requestId,
        method: req.method,
        // The query is left out: it may carry tokens.
        path,
        status: res.writableFinished ? res.statusCode : 'aborted',
        duration: Number(process.hrtime.bigint() - started) / 1e9,
      });
    });
    const originAllowed = this.applyCors(req, res);
    if (req.method === 'OPTIONS') {
      this.preflight(req, res, path, originAllowed);
      return;
    }
    if (path === '/api' || path.startsWith('/api/')) {
      const exact = this.exact.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${path}`);
      if (exact !== undefined) {
        // What polka's handler sets on a request, for the same route it would have found (the
        // query parsed as polka does, once per distinct query string).
        const search = searchOf(req.url);
        const polkaReq = Object.assign(req, {
          path,
          params: {},
          query: this.queries.of(search),
          search,
        }) as Request;
        polkaReq.originalUrl ??= req.url as string;
        dispatchRoute(this.pipeline, polkaReq, res, exact);
        return;
      }
      // Without a `next` polka runs the route chain itself; one given would be called at once (sub-app mode).
      this.app.handler(req as Request, res, undefined as unknown as NextHandler);
      return;
    }
    void this.handleOutsideApi(req, res, path, requestId);
  }

  /** Plain routes (`/metrics`), then static mounts (the UI at `/`); JSON 404 for the rest. */
  private async handleOutsideApi(req: IncomingMessage, res: ServerResponse, path: string, requestId: string) {
    try {
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
      const plain = this.plainRoutes.get(`${method} ${path}`);
      if (plain) {
        const principal = await this.guards.run(plain.meta, req, requestId, res, () => finalStatus(res));
        await plain.route.handler(req, res, { principal });
        return;
      }
      const mount = this.statics.find((s) => s.covers(path));
      if (mount) {
        if (method !== 'GET') throw new MethodNotAllowedError(req.method ?? '', path, ['GET', 'HEAD']);
        const meta = this.metas.find((m) => m.kind === 'static' && m.path === mount.mount.prefix) as RouteMeta;
        await this.guards.run(meta, req, requestId, res, () => finalStatus(res));
        const hit = await mount.find(path);
        if (!hit) throw new NotFoundError(`no file for ${path}`);
        await mount.send(req, res, hit);
        return;
      }
      const allow = [...this.plainRoutes.values()].filter((p) => p.route.path === path).map((p) => p.route.method);
      if (allow.length > 0) throw new MethodNotAllowedError(req.method ?? '', path, allow);
      throw new NotFoundError(`no route for ${req.method} ${path}`);
    } catch (error) {
      this.sendError(req, res, error);
    }
  }

  /** Methods with a route for this path, as an Allow header lists them; empty when none. */
  allowedMethods(path: string): string[] {
    const methods: string[] = METHODS.filter(
      (m) => this.app.find(m, path).handlers.length > 0 || this.plainRoutes.has(`${m} ${path}`),
    );
    if (methods.length === 0) return [];
    if (methods.includes('GET')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD');
    return [...methods, 'OPTIONS'];
  }

  /** A route's failure, or the router's own, as the documented body. */
  sendError(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    const requestId = String(res.getHeader('x-request-id'));
    const answer = errorAnswer(error, requestId);
    if (answer.internal) {
      this.options.logger.error(
        `${req.method} ${pathOf((req as Partial<Request>).originalUrl ?? req.url)} failed: ${messageOf(error)}`,
        {
          request_id: requestId,
          error: messageOf(error),
          stack: error instanceof Error ? error.stack : undefined,
        },
      );
    }
    if (res.headersSent) {
      // A streaming handler failed midway: the status is gone, so ending abruptly is the only signal left.
      res.destroy();
      return;
    }
    const headers: Record<string, string> =
      error instanceof MethodNotAllowedError ? { allow: error.allow.join(', ') } : {};
    // A refusal that says when to come back (429 on logins, 503) says it to HTTP clients too.
    const retryAfter = answer.body.error.details?.retry_after_seconds;
    if (typeof retryAfter === 'number') headers['retry-after'] = String(Math.ceil(retryAfter));
    this.writeJson(req, res, answer.status, answer.body, headers);
  }

  private writeJson(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Readonly<Record<string, string>>,
  ): void {
    if (res.headersSent || res.destroyed) return;
    if (headers !== NO_HEADERS) for (const name in headers) res.setHeader(name, headers[name] as string);
    // An unread body would otherwise be read (and discarded) to keep the connection alive. A
    // request without one is not complete yet while it is answered in the turn it arrived in
    // (api-dispatch.ts), but there is nothing to read: its connection stays open.
    if (!req.complete && hasRequestBody(req)) res.setHeader('connection', 'close');
    if (isEncodedJson(body) && status !== 204 && status !== 304)
      return writeEncoded(req, res, status, this.encoded.of(body));
    // Serialised before any header is written, so a body that cannot be encoded still gets a 500.
    const json = body === undefined || status === 204 || status === 304 ? undefined : JSON.stringify(body);
    // The one serialisation point of every answer: registered secrets are masked here (and in
    // EncodedBodies for pre-encoded ones).
    const payload = json === undefined || !this.options.redactor ? json : this.options.redactor.redactText(json);
    if (payload !== undefined) {
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('content-length', Buffer.byteLength(payload));
    }
    res.writeHead(status);
    res.end(payload);
  }

  private noRouteError(method: string, path: string): RunnerError {
    const allow = this.allowedMethods(path);
    if (allow.length > 0) return new MethodNotAllowedError(method, path, allow);
    return new NotFoundError(`no route for ${method} ${path}`);
  }

  /** Sets CORS headers; false when the request comes from an origin not in `http.cors_origins`. */
  private applyCors(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (!this.allowAllOrigins) res.setHeader('vary', 'Origin');
    if (origin === undefined) return true;
    if (this.allowAllOrigins) {
      res.setHeader('access-control-allow-origin', '*');
    } else if (originAllowed(origin, req.headers.host, this.options.corsOrigins)) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-allow-credentials', 'true');
    } else {
      return false;
    }
    res.setHeader('access-control-expose-headers', 'x-request-id');
    return true;
  }

  private preflight(req: IncomingMessage, res: ServerResponse, path: string, originAllowed: boolean): void {
    const allow = this.allowedMethods(path);
    if (allow.length === 0) return this.sendError(req, res, new NotFoundError(`no route for ${path}`));
    if (!originAllowed) {
      return this.sendError(
        req,
        res,
        new ForbiddenError(`origin ${req.headers.origin} is not allowed (config http.cors_origins)`),
      );
    }
    res.setHeader('allow', allow.join(', '));
    if (req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('access-control-allow-methods', allow.join(', '));
      res.setHeader(
        'access-control-allow-headers',
        req.headers['access-control-request-headers'] ?? DEFAULT_ALLOWED_HEADERS,
      );
      res.setHeader('access-control-max-age', '600');
    }
    this.writeJson(req, res, 204, undefined, {});
  }
}
