import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { InvalidInputError, RunnerError, type EventBus, type Logger, type Redactor } from '@runner/plugin-sdk';
import { connectHost, formatHostPort } from './address.js';
import type { HttpConfig } from './config.js';
import { ListenError } from './errors.js';
import { writeRawError } from './raw-response.js';
import { ApiRouter, requestIdOf } from './router.js';
import { WebSocketHubService } from './websocket-hub.js';

export interface HttpServiceOptions {
  config: HttpConfig;
  logger: Logger;
  events: EventBus;
  dataDir: string;
  /** Masks secrets in every answer and WebSocket message (the kernel's one redactor). */
  redactor?: Redactor;
}

/** What `<dataDir>/master.json` holds: how local CLI commands find the running master. */
export interface MasterFile {
  pid: number;
  /** `host:port` a local client connects to. */
  http: string;
  /** Unix seconds. */
  started_at: number;
  /**
   * Set when the API serves HTTPS: the certificate's absolute path, which the local CLI reads and
   * pins (it dials 127.0.0.1, a name the certificate need not hold).
   */
  tls_cert?: string;
}

/**
 * The HTTP server of the master: routes are added during setup, `start` listens once the kernel
 * is ready, `shutdown` drains. This module holds the heavy imports (polka, ws) and is loaded
 * only by the plugin's setup.
 */
export class HttpService {
  readonly router: ApiRouter;
  readonly hub: WebSocketHubService;
  private server: Server | undefined;
  private readonly inFlight = new Set<ServerResponse>();
  private closing = false;
  private stopping: Promise<void> | undefined;
  private readonly masterFile: string;

  constructor(private readonly options: HttpServiceOptions) {
    const { config, logger, events, redactor } = options;
    this.router = new ApiRouter({
      logger,
      redactor,
      bodyLimitBytes: config.bodyLimitBytes,
      corsOrigins: config.corsOrigins,
    });
    this.hub = new WebSocketHubService({
      events,
      logger,
      redactor,
      corsOrigins: config.corsOrigins,
      pingIntervalMs: config.wsPingIntervalMs,
      maxBufferedBytes: config.wsMaxBufferedBytes,
      maxBatchAgeMs: config.wsMaxBatchAgeMs,
      authorize: (req, socket, requestId) => this.router.authorizeUpgrade(req, socket, requestId),
      track: (principal, end) => this.router.streams.track(principal, end),
    });
    this.masterFile = join(options.dataDir, 'master.json');
  }

  /** Listens, then announces the master in master.json. */
  async start(): Promise<{ host: string; port: number }> {
    const { port, bindAddress, tls } = this.options.config;
    const onRequest: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
      this.inFlight.add(res);
      res.on('close', () => this.inFlight.delete(res));
      if (this.closing) res.setHeader('connection', 'close');
      this.router.handle(req, res);
    };
    // An https.Server is an http.Server over TLS: upgrades (wss), SSE and the drain work alike.
    const server: Server = tls
      ? createHttpsServer({ cert: tls.cert, key: tls.key }, onRequest)
      : createServer(onRequest);
    // A failed handshake (plain HTTP on this port, an untrusting client) is the client's problem:
    // Node closes the socket; a debug line says why, for whoever wonders.
    server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: TLSSocket) =>
      this.options.logger.debug('TLS handshake failed', {
        from: socket.remoteAddress,
        error: error.code ?? error.message,
      }),
    );
    // A plugin's own WebSocket endpoint (HttpRouter.webSocket) first; everything else is the hub's.
    server.on('upgrade', (req, socket, head) => {
      if (!this.router.webSockets.handle(req, socket, head, requestIdOf(req)))
        this.hub.handleUpgrade(req, socket, head);
    });
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(error, socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(new ListenError(bindAddress, port, error)));
      server.listen({ host: bindAddress, port }, () => resolve());
    });
    server.on('error', (error) => this.options.logger.error(`http server error: ${error.message}`));
    this.server = server;
    const bound = server.address() as AddressInfo;
    const address = { host: bound.address, port: bound.port, tls: tls !== undefined };
    this.router.setAddress(address);
    this.hub.start();
    await this.writeMasterFile(formatHostPort(connectHost(address.host), address.port), tls?.certFile);
    this.options.logger.debug('http listening', { address: formatHostPort(address.host, address.port) });
    return address;
  }

  /**
   * A request Node could not parse (bad syntax, headers too large, too slow) still gets the
   * documented body and a request id, instead of Node's bare 400.
   */
  private onClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
    // A response already under way on this socket cannot be followed by another one.
    const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (error.code === 'ECONNRESET' || !socket.writable || busy) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    this.options.logger.debug('malformed HTTP request', { request_id: requestId, error: error.code ?? error.message });
    const failure =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new RunnerError('headers_too_large', 'request headers are too large', { status: 431 })
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new RunnerError('request_timeout', 'the request was not received in time', { status: 408 })
          : new InvalidInputError(`malformed HTTP request (${error.code ?? 'parse error'})`);
    writeRawError(socket, failure, requestId);
  }

  /** Idempotent: the kernel's beforeStop tap and the plugin's stop both call it. */
  shutdown(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.closing = true;
    // First and synchronous, so that no connection is accepted once the stop has begun; Node
    // also closes idle keep-alive connections here.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Their connections close after the answer instead of waiting for another request.
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    const clientsGone = this.hub.closeAll();
    this.router.webSockets.closeAll();
    const { shutdownTimeoutMs } = this.options.config;
    if (this.inFlight.size > 0)
      this.options.logger.info(`waiting for ${this.inFlight.size} HTTP request(s) to finish`, {
        timeout_seconds: shutdownTimeoutMs / 1000,
      });
    await this.removeMasterFile();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.options.logger.warn(
          `HTTP shutdown: ${this.inFlight.size} request(s) and ${this.hub.clientCount()} WebSocket client(s) still open after ${shutdownTimeoutMs / 1000} s; closing them`,
        );
        this.hub.terminateAll();
        this.router.webSockets.terminateAll();
        server.closeAllConnections();
        resolve();
      }, shutdownTimeoutMs);
    });
    await Promise.race([Promise.all([closed, clientsGone]), deadline]);
    clearTimeout(timer);
    // After the deadline the sockets are destroyed; wait for the server to notice.
    await closed;
    this.router.setAddress(null);
  }

  private async writeMasterFile(http: string, tlsCert: string | undefined): Promise<void> {
    const content: MasterFile = { pid: process.pid, http, started_at: Math.floor(Date.now() / 1000) };
    if (tlsCert !== undefined) content.tls_cert = tlsCert;
    await mkdir(this.options.dataDir, { recursive: true, mode: 0o700 });
    const temporary = `${this.masterFile}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.masterFile);
  }

  private async removeMasterFile(): Promise<void> {
    try {
      const current = JSON.parse(await readFile(this.masterFile, 'utf8')) as Partial<MasterFile>;
      // Another master may have taken the data directory over since; its file is not ours to remove.
      if (current.pid === process.pid) await unlink(this.masterFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.options.logger.warn(`could not remove ${this.masterFile}: ${(error as Error).message}`);
      }
    }
  }
}
