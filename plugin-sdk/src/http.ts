import type { IncomingMessage, ServerResponse } from 'node:http';
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
  remoteAddress: string;
  /** For streaming answers (server-sent events): write to it and return `STREAMED`. */
  raw: { req: IncomingMessage; res: ServerResponse };
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

/** Returned by a handler that wrote the response itself. */
export const STREAMED: unique symbol = Symbol.for('runner.http.streamed') as never;

/**
 * A handler returns the JSON body (200), an HttpReply, undefined (204) or STREAMED, and throws
 * RunnerErrors for failures; the router turns them into the documented error shape.
 */
export type HttpHandler = (request: HttpRequest) => unknown;

export interface RouteOptions {
  /** Largest accepted body in bytes (default: config `http.body_limit`, 1 MiB). */
  bodyLimitBytes?: number;
}

/** The REST API under `/api/v1`, provided by the HTTP plugin. */
export interface HttpRouter {
  /** Adds a route; `path` is below `/api/v1` and may hold `:params`. */
  route(method: HttpMethod, path: string, handler: HttpHandler, options?: RouteOptions): void;
  /** Where the server listens, once the kernel is ready; null before. */
  address(): { host: string; port: number } | null;
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
    network: { bytes_sent: number; bytes_recv: number };
  };
  agent_update: { name: string; status: string; cpu_usage: number; memory_usage: number };
  event_update: { id: number | string; event_type: string; status: string; data: unknown };
  hook_execution: { hook_id: number; hook_name: string; success: boolean; duration_ms: number };
  /** Fields not fixed by service.md. */
  workflow_update: Record<string, unknown>;
  /** Fields not fixed by service.md. */
  system_alert: Record<string, unknown>;
}

/** Builds a WebSocket message; `timestampMs` (default now) is rounded down to Unix seconds. */
export function webSocketMessage<T>(type: string, data: T, timestampMs: number = Date.now()): WebSocketMessage<T> {
  return { type, timestamp: Math.floor(timestampMs / 1000), data };
}

/** The clients of `/api/v1/ws`, provided by the HTTP plugin. Every bus event reaches them already. */
export interface WebSocketHub {
  /** Sends a message to every connected client; a no-op when none is connected. */
  broadcast<K extends keyof WebSocketMessages & string>(type: K, data: WebSocketMessages[K]): void;
  /** Clients currently connected. */
  clientCount(): number;
}

export const WebSocketHubRef = createServiceRef<WebSocketHub>({
  id: 'http.websocket',
  description: 'the WebSocket hub at /api/v1/ws',
});
