import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  RunnerError,
  type Logger,
  type Principal,
  type RouteMeta,
  type WebSocketChannel,
  type WebSocketRoute,
} from '@runner/plugin-sdk';
import { WebSocket, WebSocketServer } from 'ws';
import { upgradeRefusal } from './network-checks.js';
import { writeRawError } from './raw-response.js';
import { API_PREFIX } from './route-declaration.js';

/** 1008 "policy violation": the credential the connection was opened with was revoked. */
const CLOSE_POLICY = 1008;
const CLOSE_GOING_AWAY = 1001;
const CLOSE_INTERNAL = 1011;
const DEFAULT_MAX_MESSAGE = 1024 * 1024;

interface Compiled {
  route: WebSocketRoute;
  meta: RouteMeta;
  pattern: RegExp;
  names: string[];
  wss: WebSocketServer;
}

export interface WebSocketRoutesOptions {
  logger: Logger;
  corsOrigins: readonly string[];
  /** The guard chain for an upgrade to `meta` (authentication, permission, audit); throws to refuse. */
  authorize(meta: RouteMeta, req: IncomingMessage, socket: Duplex, requestId: string): Promise<Principal | undefined>;
  /** Tracks an open connection so revoking its credential ends it (LiveStreams). */
  track(principal: Principal, end: (reason: string) => void): () => void;
}

/**
 * The WebSocket endpoints plugins own (HttpRouter.webSocket), beside the hub's /api/v1/ws: the
 * server's upgrade listener asks `match` first and hands the hub whatever does not match.
 */
export class WebSocketRoutes {
  private readonly routes: Compiled[] = [];
  private readonly open = new Set<WebSocket>();
  private closing = false;

  constructor(private readonly options: WebSocketRoutesOptions) {}

  add(route: WebSocketRoute): RouteMeta {
    if (!route.path.startsWith('/') || route.path === '/ws' || typeof route.open !== 'function' || !route.permission)
      throw new TypeError(
        `WebSocket route ${route.path}: a path under /api/v1 other than /ws, a permission and open()`,
      );
    const names: string[] = [];
    const pattern = new RegExp(
      `^${route.path
        .replace(/\/$/, '')
        .split('/')
        .map((part) => {
          if (!part.startsWith(':')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(part.slice(1));
          return '([^/]+)';
        })
        .join('/')}$`,
    );
    const meta: RouteMeta = {
      method: 'WS',
      path: `${API_PREFIX}${route.path}`,
      permission: route.permission,
      summary: route.summary,
      kind: 'websocket',
      mutating: false,
    };
    if (this.routes.some((r) => r.meta.path === meta.path))
      throw new TypeError(`WebSocket route ${meta.path} is already registered`);
    const wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload: route.maxMessageBytes ?? DEFAULT_MAX_MESSAGE,
    });
    this.routes.push({ route, meta, pattern, names, wss });
    return meta;
  }

  /** Handles the upgrade when its path is a plugin's route; false leaves it to the hub. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, requestId: string): boolean {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith(`${API_PREFIX}/`)) return false;
    const rest = url.pathname.slice(API_PREFIX.length).replace(/\/$/, '');
    for (const compiled of this.routes) {
      const found = compiled.pattern.exec(rest);
      if (!found) continue;
      const params = Object.fromEntries(compiled.names.map((name, i) => [name, decodeURIComponent(found[i + 1])]));
      this.accept(compiled, req, socket, head, requestId, params, url.searchParams);
      return true;
    }
    return false;
  }

  private accept(
    compiled: Compiled,
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    requestId: string,
    params: Record<string, string>,
    query: URLSearchParams,
  ): void {
    const refusal = upgradeRefusal(req, this.options.corsOrigins, this.closing);
    if (refusal) return writeRawError(socket, refusal, requestId);
    this.options.authorize(compiled.meta, req, socket, requestId).then(
      (principal) =>
        compiled.wss.handleUpgrade(req, socket, head, (ws) =>
          this.attach(compiled.route, ws, principal, params, query, requestId),
        ),
      (error: unknown) =>
        writeRawError(
          socket,
          error instanceof RunnerError ? error : new RunnerError('internal_error', 'the upgrade could not be checked'),
          requestId,
        ),
    );
  }

  private attach(
    route: WebSocketRoute,
    ws: WebSocket,
    principal: Principal | undefined,
    params: Record<string, string>,
    query: URLSearchParams,
    requestId: string,
  ): void {
    this.open.add(ws);
    const untrack = principal
      ? this.options.track(principal, () => ws.close(CLOSE_POLICY, 'credential revoked'))
      : () => {};
    ws.once('close', () => {
      this.open.delete(ws);
      untrack();
    });
    ws.on('error', (error) => this.options.logger.debug('websocket error', { path: route.path, error: error.message }));
    const channel: WebSocketChannel = {
      send: (data) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(data, { binary: typeof data !== 'string' });
      },
      close: (code, reason) => ws.close(code ?? 1000, reason),
      onMessage: (listener) => ws.on('message', (data: Buffer, binary: boolean) => listener(data, binary)),
      onClose: (listener) => ws.once('close', (code: number, reason: Buffer) => listener(code, reason.toString())),
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
    };
    Promise.resolve()
      .then(() => route.open(channel, { params, query, principal, requestId }))
      .catch((error: Error) => {
        this.options.logger.debug('websocket route refused', { path: route.path, error: error.message });
        ws.close(CLOSE_INTERNAL, (error instanceof RunnerError ? error.message : 'internal error').slice(0, 120));
      });
  }

  /** Closes every connection with 1001 (the server stops); new upgrades are refused. */
  closeAll(): void {
    this.closing = true;
    for (const ws of this.open) ws.close(CLOSE_GOING_AWAY, 'server stopping');
  }

  terminateAll(): void {
    for (const ws of this.open) ws.terminate();
  }
}
