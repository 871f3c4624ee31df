import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  NotFoundError,
  RunnerError,
  streamPermission,
  webSocketMessage,
  type BusEvent,
  type EventBus,
  type Logger,
  type Permission,
  type Principal,
  type Redactor,
  type WebSocketHub,
  type WebSocketMessages,
} from '@runner/plugin-sdk';
import { WebSocket, WebSocketServer } from 'ws';
import { writeRawError } from './raw-response.js';
import { upgradeRefusal } from './network-checks.js';
import { API_PREFIX, requestIdOf } from './router.js';

export const WEBSOCKET_PATH = `${API_PREFIX}/ws`;
/** Clients only listen; anything they send is dropped, and nothing large is accepted. */
const MAX_INCOMING_BYTES = 64 * 1024;
/** How long a slow client's close handshake may take before its socket is destroyed. */
const SLOW_CLOSE_GRACE_MS = 5_000;
/** 1013 "try again later": the client fell behind and should reconnect, then reload state. */
export const CLOSE_TOO_SLOW = 1013;
/** 1001 "going away": the server is stopping. */
export const CLOSE_GOING_AWAY = 1001;
/** 1008 "policy violation": the credential the connection was opened with was revoked. */
export const CLOSE_POLICY = 1008;

interface Client {
  ws: WebSocket;
  /** The upgraded connection: batches are written to it as ready-made frames. */
  socket: Duplex;
  /** Messages of the batch being gathered from this position on are this client's (it joined then). */
  from: number;
  /** False once it stopped receiving (too slow, or the hub is closing). */
  receiving: boolean;
  /** Whether a pong came back since the last ping. */
  alive: boolean;
  /** Who connected, as the guards established; undefined without an authentication guard. */
  principal?: Principal;
  killTimer?: NodeJS.Timeout;
}

export interface WebSocketHubOptions {
  events: EventBus;
  logger: Logger;
  /** Masks registered secrets in every message sent. */
  redactor?: Redactor;
  corsOrigins: readonly string[];
  pingIntervalMs: number;
  /** Past this many unsent bytes a client is closed with 1013. */
  maxBufferedBytes: number;
  /**
   * The oldest a gathered message gets while more keep coming (`http.ws_max_batch_age`, 1 ms):
   * batching per event-loop turn keeps the writes few (one per client per turn), this bounds the
   * wait when a turn runs long. The target is an event's latency p99 under 10 ms
   * (test/bench/ws-fanout.mjs), with the write and the client's own turn still to come.
   */
  maxBatchAgeMs: number;
  /**
   * The router's guard chain for the upgrade (authentication, audit); throws to refuse. The
   * principal it resolves with is kept with the client, so messages can be filtered by permission.
   */
  authorize?: (req: IncomingMessage, socket: Duplex, requestId: string) => Promise<Principal | undefined>;
  /** Keeps a connected client's principal so that revoking its credential ends it (LiveStreams). */
  track?: (principal: Principal, end: (reason: string) => void) => () => void;
}

/**
 * Pushes every bus event, and messages plugins broadcast, to the clients of /api/v1/ws. A client
 * that falls more than `maxBufferedBytes` behind is closed (1013) rather than skipped: a UI that
 * silently missed an update shows a wrong state, one that reconnects reloads it.
 */
export class WebSocketHubService implements WebSocketHub {
  private readonly wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: MAX_INCOMING_BYTES });
  private readonly clients = new Set<Client>();
  /** Frames gathered for the next write, each encoded and framed once for every client, with what a client must hold to get it. */
  private batch: Buffer[] = [];
  private batchPermissions: Permission[] = [];
  /** performance.now() when the batch's first message was added. */
  private batchStartedAt = 0;
  /** The write coming, at the end of this turn of the event loop. */
  private flushing: NodeJS.Immediate | undefined;
  private readonly unsubscribe: () => void;
  private readonly requestIds = new WeakMap<IncomingMessage, string>();
  private pingTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private emptied: (() => void)[] = [];
  /** Listeners of this hub's own messages (the cluster, relaying them to the other masters). */
  private readonly relays = new Set<(text: string, permission: Permission) => void>();

  constructor(private readonly options: WebSocketHubOptions) {
    this.wss.on('headers', (headers, req) => {
      const id = this.requestIds.get(req);
      if (id) headers.push(`x-request-id: ${id}`);
    });
    // One subscription for all clients: an event is encoded once, and only while someone listens.
    this.unsubscribe = options.events.onAny((event) => {
      if (this.clients.size === 0 && this.relays.size === 0) return;
      const text = this.encode(event);
      if (text !== null) this.own(text, streamPermission(event.type));
    });
  }

  onMessage(listener: (text: string, permission: Permission) => void): () => void {
    this.relays.add(listener);
    return () => void this.relays.delete(listener);
  }

  deliver(text: string, permission: Permission): void {
    if (this.clients.size > 0 && !this.closing) this.enqueue(text, permission);
  }

  /** A message of this master's: to its clients, and to the relays (other masters' clients). */
  private own(text: string, permission: Permission): void {
    for (const relay of this.relays) relay(text, permission);
    if (this.clients.size > 0) this.enqueue(text, permission);
  }

  broadcast<K extends keyof WebSocketMessages & string>(
    type: K,
    data: WebSocketMessages[K],
    options: { permission?: Permission } = {},
  ): void {
    if (this.clients.size === 0 && this.relays.size === 0) return;
    this.own(
      this.redactText(JSON.stringify(webSocketMessage(type, data))),
      options.permission ?? streamPermission(type),
    );
  }

  clientCount(): number {
    let count = 0;
    for (const client of this.clients) if (client.receiving) count++;
    return count;
  }

  /** The server's `upgrade` listener. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', (error) => this.options.logger.debug('websocket socket error', { error: error.message }));
    const requestId = requestIdOf(req);
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/$/, '');
    if (path !== WEBSOCKET_PATH)
      return writeRawError(
        socket,
        new NotFoundError(`no WebSocket endpoint at ${path}; use ${WEBSOCKET_PATH}`),
        requestId,
      );
    const refusal = upgradeRefusal(req, this.options.corsOrigins, this.closing);
    if (refusal) return writeRawError(socket, refusal, requestId);
    const accept = (principal: Principal | undefined) => {
      this.requestIds.set(req, requestId);
      this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, socket, req, requestId, principal));
    };
    if (!this.options.authorize) return accept(undefined);
    this.options
      .authorize(req, socket, requestId)
      .then(accept, (error: unknown) =>
        writeRawError(
          socket,
          error instanceof RunnerError ? error : new RunnerError('internal_error', 'the upgrade could not be checked'),
          requestId,
        ),
      );
  }

  /** Starts keep-alive pings; a client that missed the previous pong is terminated. */
  start(): void {
    this.pingTimer ??= setInterval(() => this.pingAll(), this.options.pingIntervalMs);
    this.pingTimer.unref();
  }

  /** Closes every client with 1001; resolves once all are gone. New upgrades are refused. */
  closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.pingTimer);
    // What was gathered goes out before the close frames.
    this.flush();
    this.unsubscribe();
    for (const client of this.clients) {
      this.stopReceiving(client);
      client.ws.close(CLOSE_GOING_AWAY, 'server stopping');
    }
    return this.clients.size === 0 ? Promise.resolve() : new Promise((resolve) => this.emptied.push(resolve));
  }

  /** Destroys every client's socket at once (the shutdown deadline passed). */
  terminateAll(): void {
    for (const client of this.clients) client.ws.terminate();
  }

  private attach(
    ws: WebSocket,
    socket: Duplex,
    req: IncomingMessage,
    requestId: string,
    principal: Principal | undefined,
  ): void {
    const client: Client = { ws, socket, from: this.batch.length, receiving: true, alive: true, principal };
    const log = this.options.logger.child({ request_id: requestId, remote: req.socket.remoteAddress });
    this.clients.add(client);
    // The handshake may complete after closeAll ran.
    if (this.closing) {
      this.stopReceiving(client);
      ws.close(CLOSE_GOING_AWAY, 'server stopping');
    }
    log.debug('websocket client connected', { clients: this.clients.size });
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('error', (error) => log.debug('websocket client error', { error: error.message }));
    // 1008 (policy violation): the credential it was opened with no longer holds.
    const untrack = principal && this.options.track?.(principal, (reason) => ws.close(CLOSE_POLICY, reason));
    ws.on('close', (code) => {
      untrack?.();
      this.stopReceiving(client);
      clearTimeout(client.killTimer);
      this.clients.delete(client);
      log.debug('websocket client disconnected', { code, clients: this.clients.size });
      if (this.clients.size === 0) for (const resolve of this.emptied.splice(0)) resolve();
    });
  }

  /**
   * Adds a message to the batch; the batch goes out once per turn of the event loop. A run emits
   * an event or two per task: one write per event per client made 100 clients cost a master 5x
   * the CPU of none (test/bench/ws-fanout.mjs).
   */
  private enqueue(text: string, permission: Permission): void {
    const now = performance.now();
    if (this.batch.length === 0) this.batchStartedAt = now;
    this.batch.push(textFrame(Buffer.from(text)));
    this.batchPermissions.push(permission);
    // A run can go on for tens of milliseconds of promise continuations without the event loop
    // turning (one task's end starts the next): a batch then waited for all of them. Measured on
    // a 1,000-task run (ws-fanout.mjs, load 7.5): 74 writes a run, the first event of a batch 8 ms old at
    // its write (p50), 24 ms at p90. Past maxBatchAgeMs the batch goes out with this event.
    if (now - this.batchStartedAt >= this.options.maxBatchAgeMs) this.flush();
    else this.flushing ??= setImmediate(() => this.flush());
  }

  /**
   * Writes the batch to every client: one write each, of frames built once for all. A client that
   * may not see some of them (a Viewer and agent exec output) gets its own selection.
   */
  private flush(): void {
    clearImmediate(this.flushing);
    this.flushing = undefined;
    const frames = this.batch;
    const permissions = this.batchPermissions;
    if (frames.length === 0) return;
    this.batch = [];
    this.batchPermissions = [];
    let all: Buffer | undefined;
    for (const client of this.clients) {
      const from = client.from;
      client.from = 0;
      if (from >= frames.length) continue;
      const mine: Buffer[] = [];
      for (let i = from; i < frames.length; i++)
        if (mayReceive(client, permissions[i] as Permission)) mine.push(frames[i] as Buffer);
      if (mine.length === 0) continue;
      if (mine.length === frames.length) all ??= Buffer.concat(frames);
      this.send(client, mine.length === frames.length ? (all as Buffer) : Buffer.concat(mine));
    }
  }

  private send(client: Client, frames: Buffer): void {
    if (!client.receiving || client.ws.readyState !== WebSocket.OPEN || client.socket.destroyed) return;
    if (client.ws.bufferedAmount > this.options.maxBufferedBytes) {
      this.options.logger.warn('websocket client too slow, closing it', { buffered_bytes: client.ws.bufferedAmount });
      this.stopReceiving(client);
      client.ws.close(CLOSE_TOO_SLOW, 'client too slow; reconnect');
      // The close frame queues behind the backlog; a client that reads nothing never gets it.
      client.killTimer = setTimeout(() => client.ws.terminate(), SLOW_CLOSE_GRACE_MS).unref();
      return;
    }
    // Whole frames, written between ws's own (pings, close) which are whole frames too; ws's
    // bufferedAmount counts them, as the socket's.
    client.socket.write(frames);
  }

  private stopReceiving(client: Client): void {
    client.receiving = false;
  }

  private redactText(text: string): string {
    return this.options.redactor ? this.options.redactor.redactText(text) : text;
  }

  private encode(event: BusEvent): string | null {
    try {
      return this.redactText(JSON.stringify(webSocketMessage(event.type, event.data, event.timestamp, event.id)));
    } catch (error) {
      this.options.logger.error(`event ${event.type} cannot be encoded as JSON; not sent to WebSocket clients`, {
        error: (error as Error).message,
      });
      return null;
    }
  }

  private pingAll(): void {
    for (const client of this.clients) {
      if (!client.alive) {
        this.options.logger.debug('websocket client missed a pong, terminating it');
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }
}

/** Streams carry only what the client may see; without an auth plugin there is no principal and no filter. */
function mayReceive(client: Client, permission: Permission): boolean {
  return client.principal === undefined || client.principal.can(permission);
}

/** An unmasked, final text frame (RFC 6455 5.2), as a server sends it; the same bytes for every client. */
export function textFrame(payload: Buffer): Buffer {
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81; // FIN + opcode 1 (text)
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  payload.copy(frame, headerLength);
  return frame;
}
