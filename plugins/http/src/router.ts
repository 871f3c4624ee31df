import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ForbiddenError,
  messageOf,
  NotFoundError,
  RunnerError,
  STREAMED,
  type HttpHandler,
  type HttpMethod,
  type HttpReply,
  type HttpRequest,
  type HttpRouter,
  type Logger,
  type Redactor,
  type RouteOptions,
} from '@runner/plugin-sdk';
import polka, { type NextHandler, type Polka, type Request } from 'polka';
import { errorAnswer, MethodNotAllowedError } from './errors.js';
import { readJsonBody } from './json-body.js';

export const API_PREFIX = '/api/v1';
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const DEFAULT_ALLOWED_HEADERS = 'content-type, authorization, x-request-id';
/** A client's own id is kept (it ties the CLI's logs to ours) when it cannot smuggle anything into a log line. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ApiRouterOptions {
  logger: Logger;
  /** Masks registered secrets in every JSON answer, errors included. */
  redactor?: Redactor;
  bodyLimitBytes: number;
  corsOrigins: readonly string[];
}

/**
 * The HttpRouter service: routes under /api/v1 on polka, JSON bodies, CORS, request ids, request
 * logging, and the mapping of every failure to the documented error body.
 */
export class ApiRouter implements HttpRouter {
  private readonly app: Polka;
  private readonly registered = new Set<string>();
  private readonly allowAllOrigins: boolean;
  private listeningOn: { host: string; port: number } | null = null;

  constructor(private readonly options: ApiRouterOptions) {
    this.allowAllOrigins = options.corsOrigins.includes('*');
    this.app = polka({
      onNoMatch: (req, res) => this.sendError(req, res, this.noRouteError(req.method, req.path)),
      onError: (error, req, res) => this.sendError(req, res, error),
    });
  }

  route(method: HttpMethod, path: string, handler: HttpHandler, options: RouteOptions = {}): void {
    if (!METHODS.includes(method))
      throw new TypeError(`route ${method} ${path}: method must be one of ${METHODS.join(', ')}`);
    if (!path.startsWith('/') || path.includes('?')) {
      throw new TypeError(`route ${method} ${path}: path must start with "/" and hold no query, e.g. "/agents/:name"`);
    }
    // `/a/:x` and `/a/:y` match the same requests, so parameter names do not make routes distinct.
    const shape = `${method} ${path.replace(/:[^/]+/g, ':').replace(/\/$/, '')}`;
    if (this.registered.has(shape)) throw new TypeError(`route ${method} ${API_PREFIX}${path} is already registered`);
    this.registered.add(shape);
    const limit = options.bodyLimitBytes ?? this.options.bodyLimitBytes;
    this.app.add(method, `${API_PREFIX}${path}`, (req: Request, res: ServerResponse) =>
      this.dispatch(req, res, handler, limit),
    );
  }

  address(): { host: string; port: number } | null {
    return this.listeningOn;
  }

  /** Set by the server once it listens. */
  setAddress(address: { host: string; port: number } | null): void {
    this.listeningOn = address;
  }

  /** The server's `request` listener. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = process.hrtime.bigint();
    const path = pathOf(req.url);
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    res.setHeader('x-content-type-options', 'nosniff');
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
    // Without a `next` polka runs the route chain itself; one given would be called at once (sub-app mode).
    this.app.handler(req as Request, res, undefined as unknown as NextHandler);
  }

  /** Methods with a route for this path, as an Allow header lists them; empty when none. */
  allowedMethods(path: string): string[] {
    const methods: string[] = METHODS.filter((m) => this.app.find(m, path).handlers.length > 0);
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
    this.writeJson(req, res, answer.status, answer.body, headers);
  }

  private async dispatch(
    req: Request,
    res: ServerResponse,
    handler: HttpHandler,
    bodyLimitBytes: number,
  ): Promise<void> {
    try {
      const body = await readJsonBody(req, bodyLimitBytes);
      const request: HttpRequest = {
        // HEAD reaches GET routes; Node leaves the body out of the answer.
        method: (req.method === 'HEAD' ? 'GET' : req.method) as HttpMethod,
        path: req.path.slice(API_PREFIX.length) || '/',
        params: { ...req.params },
        query: firstValues(req.query as Record<string, string | string[] | undefined>),
        headers: req.headers,
        body,
        remoteAddress: req.socket.remoteAddress ?? '',
        raw: { req, res },
      };
      const result = await handler(request);
      if (result === STREAMED) return;
      if (isReply(result)) this.writeJson(req, res, result.status, result.body, result.headers ?? {});
      else if (result === undefined) this.writeJson(req, res, 204, undefined, {});
      else this.writeJson(req, res, 200, result, {});
    } catch (error) {
      this.sendError(req, res, error);
    }
  }

  private writeJson(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string>,
  ): void {
    if (res.headersSent || res.destroyed) return;
    // Serialised before any header is written, so a body that cannot be encoded still gets a 500.
    const json = body === undefined || status === 204 || status === 304 ? undefined : JSON.stringify(body);
    // The one serialisation point of every answer: registered secrets are masked here.
    const payload = json === undefined || !this.options.redactor ? json : this.options.redactor.redactText(json);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    // An unread body would otherwise be read (and discarded) to keep the connection alive.
    if (!req.complete) res.setHeader('connection', 'close');
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
    } else if (this.options.corsOrigins.includes(origin)) {
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

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const at = raw.indexOf('?');
  return at === -1 ? raw : raw.slice(0, at);
}

function firstValues(query: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[key] = first;
  }
  return out;
}

function isReply(value: unknown): value is HttpReply {
  return typeof value === 'object' && value !== null && (value as Partial<HttpReply>).kind === 'http-reply';
}
