import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Permission, Principal } from './permissions.js';
import { createServiceRef } from './service-ref.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request as a route handler sees it. The JSON body is parsed and size-checked already. */
export interface HttpRequest {
  method: HttpMethod;
  /** Path below `/api/v1`, e.g. `/agents/web-1`. */
  path: string;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body; undefined when the request had none. */
  body: unknown;
  /**
   * The body's bytes exactly as received, before parsing: what a signature over the body (a
   * webhook's `X-Hub-Signature-256`) is checked against. Undefined when the request had none.
   */
  bodyBytes?: Uint8Array;
  remoteAddress: string;
  /** The request's id (`x-request-id`), also in the error body and the log. */
  requestId: string;
  /** Who is calling, as the authentication guard established; undefined before that guard runs. */
  principal?: Principal;
  /** For streaming answers (server-sent events): write to it and return `STREAMED`. */
  raw: { req: IncomingMessage; res: ServerResponse };
}

const auditNotes = new WeakMap<IncomingMessage, string>();

/**
 * Says what a state-changing call was about, for its audit record (`workflow deploy, run r-1`, the
 * command an exec ran): the audit guard writes it beside the route when the answer is finished.
 * The path and status alone do not tell a reader which workflow ran or what command was sent.
 */
export function noteForAudit(request: Pick<HttpRequest, 'raw'>, detail: string): void {
  auditNotes.set(request.raw.req, detail);
}

/** The note a handler left for this request's audit record, if any. */
export function auditNoteOf(req: IncomingMessage): string | undefined {
  return auditNotes.get(req);
}

/** An answer with a status other than 200 or with headers. */
export interface HttpReply {
  readonly kind: 'http-reply';
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function reply(status: number, body?: unknown, headers?: Record<string, string>): HttpReply {
  return { kind: 'http-reply', status, body, headers };
}

/**
 * A JSON body encoded already, for an answer served many times unchanged (a cached page of a
 * list). Return the same object for as long as the body stays the same: the router keeps, with
 * each object, its bytes with registered secrets masked (masked again once the set of secrets
 * changed) and a strong ETag, so a repeated answer costs no serialisation, masking or encoding,
 * and a request whose `If-None-Match` names that ETag gets 304 without a body.
 *
 * Contract: guards run before the handler as for every answer, so what the router keeps was
 * already returned to a caller that passed them; it is never served to one that did not. A
 * handler whose body depends on who asks (a role that may see less) must keep one object per
 * distinct view, keyed by what the caller may see, never one shared by all.
 */
export interface EncodedJson {
  readonly kind: 'encoded-json';
  /** The JSON text, unmasked: the router masks it (once per set of secrets). */
  readonly text: string;
}

/** Wraps encoded JSON text; keep the returned object with the data it encodes (see EncodedJson). */
export function encodedJson(text: string): EncodedJson {
  return { kind: 'encoded-json', text };
}

/**
 * The EncodedJson of each object a source hands back, made once per object: for a cached page that
 * the source returns again (the same object) until a write drops it. `encode` turns the object
 * (and `context`, which must be the same for every request the source answers with this object,
 * such as the limit a first page was read with) into the answer's JSON text. Kept in a WeakMap, so
 * a dropped page takes its encoding with it.
 */
export function encodedPer<T extends object, C extends unknown[]>(
  encode: (page: T, ...context: C) => string,
): (page: T, ...context: C) => EncodedJson {
  const kept = new WeakMap<T, EncodedJson>();
  return (page, ...context) => {
    let encoded = kept.get(page);
    if (encoded === undefined) {
      encoded = encodedJson(encode(page, ...context));
      kept.set(page, encoded);
    }
    return encoded;
  };
}

/** Returned by a handler that wrote the response itself. */
export const STREAMED: unique symbol = Symbol.for('runner.http.streamed') as never;

/**
 * A handler returns the JSON body (200), an HttpReply, undefined (204) or STREAMED, and throws
 * RunnerErrors for failures; the router turns them into the documented error shape.
 */
export type HttpHandler = (request: HttpRequest) => unknown;

/**
 * One response of a route: a schema for a JSON body (200/201/202), or a description with a
 * content type for bodies that are not JSON (`text/event-stream`, `application/octet-stream`).
 * Error statuses need not be listed: every route documents the shared error shape.
 */
export type ResponseSpec = TSchema | { description: string; schema?: TSchema; contentType?: string };

/**
 * A REST route as a plugin declares it. The router validates `params`, `query` and `body` from the
 * schemas before the handler runs (400 naming the field), runs the guard chain with the route's
 * metadata, and lists the route in `GET /api/v1/openapi.json`.
 */
export interface RouteSpec<
  P extends TObject | undefined = TObject | undefined,
  Q extends TObject | undefined = TObject | undefined,
  B extends TSchema | undefined = TSchema | undefined,
> {
  method: HttpMethod;
  /** Below `/api/v1`, with `:params` (`/agents/:name`). */
  path: string;
  /** One line for the OpenAPI document. */
  summary: string;
  description?: string;
  /** OpenAPI tags (default: the first path segment). */
  tags?: string[];
  /** What the caller must hold; `public` for health, login and the OpenAPI document only. */
  permission: Permission;
  params?: P;
  query?: Q;
  body?: B;
  /** Responses by status. */
  responses: Record<number, ResponseSpec>;
  /** Largest accepted body in bytes (default: config `http.body_limit`). */
  bodyLimitBytes?: number;
  /**
   * Also accept `application/x-www-form-urlencoded` whose field of this name holds the JSON body
   * (GitHub's "form" webhooks send `payload=<JSON>`). `bodyBytes` stays the bytes as received.
   */
  formField?: string;
  /** A long-lived answer (server-sent events): guards run, the handler writes to `raw` and returns STREAMED. */
  streaming?: boolean;
  handler: (request: TypedHttpRequest<P, Q, B>) => unknown;
}

/** An HttpRequest whose params, query and body have the types of the route's schemas. */
export type TypedHttpRequest<P, Q, B> = Omit<HttpRequest, 'params' | 'query' | 'body'> & {
  params: P extends TSchema ? Static<P> : Record<string, string>;
  query: Q extends TSchema ? Static<Q> : Record<string, string>;
  body: B extends TSchema ? Static<B> : undefined;
};

/** Declares a route with its types inferred from its schemas. */
export function defineRoute<
  P extends TObject | undefined = undefined,
  Q extends TObject | undefined = undefined,
  B extends TSchema | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> {
  return spec;
}

/**
 * A route without its handler: what a plugin declares statically (`routes` in its definition), so
 * that the build writes the OpenAPI document and the UI's typed client, and the CLI builds its
 * commands, from the declarations alone, without setting anything up. Setup serves each
 * declaration with `router.add(serve(declaration, handler))`.
 */
export type RouteDeclaration<
  P extends TObject | undefined = TObject | undefined,
  Q extends TObject | undefined = TObject | undefined,
  B extends TSchema | undefined = TSchema | undefined,
> = Omit<RouteSpec<P, Q, B>, 'handler'>;

/**
 * Declares a route without its handler, its types inferred from its schemas (see RouteDeclaration);
 * the responses keep their schemas' types, so a client's answer is `RouteAnswer<typeof route>`.
 */
export function declareRoute<
  P extends TObject | undefined = undefined,
  Q extends TObject | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends Record<number, ResponseSpec> = Record<number, ResponseSpec>,
>(
  declaration: Omit<RouteDeclaration<P, Q, B>, 'responses'> & { responses: R },
): Omit<RouteDeclaration<P, Q, B>, 'responses'> & { readonly responses: R } {
  return Object.freeze(declaration);
}

type SchemaOf<S> = S extends { schema: infer T } ? T : S;
type StaticOf<S> = SchemaOf<S> extends TSchema ? Static<SchemaOf<S>> : undefined;

/** The answer of a declared route on success (its 200, else 201, else 202 schema). */
export type RouteAnswer<D> = D extends { responses: infer R }
  ? 200 extends keyof R
    ? StaticOf<R[200]>
    : 201 extends keyof R
      ? StaticOf<R[201]>
      : 202 extends keyof R
        ? StaticOf<R[202]>
        : unknown
  : unknown;

/** A declared route with the handler that serves it, for `router.add`. */
export function serve<P extends TObject | undefined, Q extends TObject | undefined, B extends TSchema | undefined>(
  declaration: RouteDeclaration<P, Q, B>,
  handler: (request: TypedHttpRequest<P, Q, B>) => unknown,
): RouteSpec<P, Q, B> {
  return { ...declaration, handler };
}

/** What the guard chain sees of the route a request reached. */
export interface RouteMeta {
  /** `WS` for the WebSocket upgrade. */
  method: HttpMethod | 'WS';
  /** The declared path with its prefix (`/api/v1/agents/:name`, `/metrics`, `/`). */
  path: string;
  permission: Permission;
  summary: string;
  kind: 'api' | 'sse' | 'websocket' | 'static' | 'plain';
  /** True for methods that change state (POST, PUT, PATCH, DELETE); audit records these. */
  mutating: boolean;
}

/** One request as a guard sees it. */
export interface GuardContext {
  readonly route: RouteMeta;
  readonly req: IncomingMessage;
  readonly remoteAddress: string;
  readonly requestId: string;
  /** Set by the authentication guard; later guards and the handler read it. */
  principal: Principal | undefined;
  /** Runs once the answer is finished (or the stream closed) with its status: audit, metrics. */
  onFinish(callback: (status: number) => void): void;
}

/**
 * A step of the router's guard chain. Guards run in ascending `order` for every API route, the
 * WebSocket upgrade, server-sent-event routes, plain routes and static mounts. A guard refuses by
 * throwing a RunnerError (UnauthorizedError 401, ForbiddenError 403, status 429); the router answers
 * with the error shape and the handler never runs. Conventional orders: rate limiting 50,
 * authentication 100, authorization 200, audit 300.
 */
export interface Guard {
  name: string;
  order: number;
  check(context: GuardContext): void | Promise<void>;
}

/** Static files served outside `/api/v1` (the web UI at `/`). */
export interface StaticMount {
  /** URL prefix, `/` for the UI. */
  prefix: string;
  /** Directory of built files. */
  dir: string;
  /** File served for paths that match no file (single-page app), e.g. `index.html`. */
  spaFallback?: string;
  /** Paths under this prefix are content-hashed and cached for a year (`/_app/immutable/`). */
  immutablePrefix?: string;
  permission: Permission;
}

/** A route outside `/api/v1` that writes its own answer (`GET /metrics` in the Prometheus format). */
export interface PlainRoute {
  method: HttpMethod;
  path: string;
  summary: string;
  permission: Permission;
  handler(req: IncomingMessage, res: ServerResponse, context: { principal?: Principal }): void | Promise<void>;
}

/**
 * One WebSocket connection a plugin owns (`HttpRouter.webSocket`). Frames are the plugin's own
 * protocol: the hub's batching, filtering and redaction do not apply, so a plugin that sends
 * run output passes it through the redactor itself.
 */
export interface WebSocketChannel {
  /** A string goes as a text frame, bytes as a binary frame. Dropped once closed. */
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  /** Each frame the client sends, whole (at most the route's `maxMessageBytes`). */
  onMessage(listener: (data: Buffer, binary: boolean) => void): void;
  /** Once, when the connection ends for any reason (client, server, revoked credential, stop). */
  onClose(listener: (code: number, reason: string) => void): void;
  /** Bytes queued and not yet written: a producer faster than the client waits while it is large. */
  readonly bufferedAmount: number;
}

/**
 * A WebSocket endpoint a plugin owns at `path` under /api/v1 (`/terminal/sessions/:id/socket`).
 * The upgrade goes through the same doors as the hub's: the origin check, then the guard chain
 * (authentication, `permission`, audit) with `method: 'WS'`; only then the handshake, then
 * `open`. The connection is tracked like every open stream: revoking the credential it was opened
 * with (logout, a revoked token, a removed user) closes it with 1008. The server's stop closes it
 * with 1001.
 */
export interface WebSocketRoute {
  /** Under /api/v1, with `:name` segments; may not be `/ws` (the hub's). */
  path: string;
  summary: string;
  permission: Permission;
  /** Largest frame accepted from the client; default 1 MiB. */
  maxMessageBytes?: number;
  /**
   * Called after the handshake. `params` are the path's segments; a throw closes the socket with
   * 1011 and its message (a RunnerError's message is meant for the client). May be async.
   */
  open(
    channel: WebSocketChannel,
    request: { params: Record<string, string>; query: URLSearchParams; principal?: Principal; requestId: string },
  ): void | Promise<void>;
}

/** The REST API under `/api/v1` and the other mounts of the HTTP port, provided by the HTTP plugin. */
export interface HttpRouter {
  /** Adds a WebSocket endpoint owned by a plugin (see WebSocketRoute). Paths must not overlap. */
  webSocket(route: WebSocketRoute): void;
  /**
   * Keeps something long-lived a principal opened outside an HTTP answer (a terminal session that
   * outlives its socket) so that revoking the credential ends it like an open stream: `end` is
   * called with the reason. The returned function forgets it (call it when the thing ends).
   */
  trackPrincipal(principal: Principal, end: (reason: string) => void): () => void;
  /** Adds a declared route. */
  add(route: RouteSpec<any, any, any>): void;
  /** Adds a guard to the chain. */
  guard(guard: Guard): void;
  mountStatic(mount: StaticMount): void;
  plain(route: PlainRoute): void;
  /** Every declared route and mount, for the OpenAPI document and tests. */
  routes(): readonly RouteMeta[];
  /** Where the server listens (and whether it serves HTTPS), once the kernel is ready; null before. */
  address(): { host: string; port: number; tls?: boolean } | null;
  /**
   * Ends the open WebSocket connections and server-sent event streams whose principal matches
   * (the credential they were opened with was revoked); answers how many were ended.
   */
  endStreams(match: (principal: Principal) => boolean, reason: string): number;
  /**
   * Reports that a part of the master works in a reduced way (`reason`, one sentence an operator
   * can act on, without paths or secrets: health is public), or that it recovered (`null`). While
   * any part is degraded, GET /api/v1/health answers `status: "degraded"` with every reason.
   */
  reportCondition(source: string, reason: string | null): void;
}

export const HttpRouterRef = createServiceRef<HttpRouter>({
  id: 'http.router',
  description: 'the REST API router under /api/v1',
});

/**
 * One message of the WebSocket channel `/api/v1/ws` (service.md section 6). Bus events are sent
 * with their event type (`workflow.started`); plugins broadcast the typed messages below.
 */
export interface WebSocketMessage<T = unknown> {
  type: string;
  /** Unix seconds. */
  timestamp: number;
  /** Milliseconds since the Unix epoch (the same instant, finer). */
  timestamp_ms: number;
  /** The bus event's id, for messages that carry one (sortable). */
  id?: string;
  data: T;
}

/**
 * The `data` of each message type plugins broadcast (service.md section 6). A plugin adds its
 * own type by declaration merging, as with RunnerEvents.
 */
export interface WebSocketMessages {
  /** Broadcast every 5 seconds. */
  system_metrics: {
    cpu: { usage_percent: number; cores: number };
    memory: { used: number; total: number; used_percent: number };
    disk: { used: number; total: number; used_percent: number };
    /** Totals since boot over every interface but loopback, and their rates over the last period. */
    network: { bytes_sent: number; bytes_recv: number; bytes_sent_per_sec?: number; bytes_recv_per_sec?: number };
  };
  agent_update: { name: string; status: string; cpu_usage: number; memory_usage: number };
  /** An agent group was created, changed (description or members) or deleted (agent-groups plugin). */
  agent_group_update: { name: string; change: 'created' | 'updated' | 'deleted'; members: number };
  event_update: { id: number | string; event_type: string; status: string; data: unknown };
  /** A stack's secret was set or removed (secrets plugin): its name, never its value. */
  secret_update: { stack: string; name: string };
  /** A stack was created, changed (its fields or variables) or removed (stacks plugin). */
  stack_update: { name: string; change: 'created' | 'updated' | 'deleted' };
  hook_execution: { hook_id: number; hook_name: string; success: boolean; duration_ms: number };
  /** Fields not fixed by service.md. */
  workflow_update: Record<string, unknown>;
  /**
   * Fields not fixed by service.md. The dashboard plugin sends `{resource, state, value, threshold,
   * message}` (its GET /api/v1/dashboard `alerts` schema) when the master crosses a health threshold.
   */
  system_alert: Record<string, unknown>;
}

/**
 * Builds a WebSocket message: `timestamp` is `timestampMs` (default now) rounded down to Unix
 * seconds, `timestamp_ms` the same instant in milliseconds, `id` the bus event's id when given.
 */
export function webSocketMessage<T>(
  type: string,
  data: T,
  timestampMs: number = Date.now(),
  id?: string,
): WebSocketMessage<T> {
  const message: WebSocketMessage<T> = {
    type,
    timestamp: Math.floor(timestampMs / 1000),
    timestamp_ms: timestampMs,
    data,
  };
  if (id !== undefined) message.id = id;
  return message;
}

/** The clients of `/api/v1/ws`, provided by the HTTP plugin. Every bus event reaches them already. */
export interface WebSocketHub {
  /**
   * Sends a message to every connected client allowed to see it (`permission`, default
   * none needed beyond being connected); a no-op when none is connected.
   */
  broadcast<K extends keyof WebSocketMessages & string>(
    type: K,
    data: WebSocketMessages[K],
    options?: { permission?: Permission },
  ): void;
  /** Clients currently connected. */
  clientCount(): number;
  /**
   * Hears every message this hub sends of its own (bus events and broadcasts), encoded and
   * redacted, with the permission a client needs: what the cluster relays to the other masters.
   */
  onMessage(listener: (text: string, permission: Permission) => void): () => void;
  /** Sends a message another master's hub sent (`onMessage` there) to this hub's clients. */
  deliver(text: string, permission: Permission): void;
}

export const WebSocketHubRef = createServiceRef<WebSocketHub>({
  id: 'http.websocket',
  description: 'the WebSocket hub at /api/v1/ws',
});
