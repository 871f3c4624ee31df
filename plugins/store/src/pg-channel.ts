import type { Client, ClientConfig, Notification } from 'pg';
import type { Logger, Store } from '@runner/plugin-sdk';

/**
 * NOTIFY carries at most 8000 bytes of payload; a longer message is stored in `_store_messages`
 * and the notification carries `@<id>`, which every listener reads back.
 */
export const MAX_NOTIFY_BYTES = 7900;
/** Stored messages are read within milliseconds; older ones are deleted by their sender. */
const STORED_MESSAGE_TTL_S = 60;
const RECONNECT_MAX_MS = 10_000;

export interface PgChannelOptions {
  /** The LISTEN channel: a plain identifier. */
  name: string;
  connection: ClientConfig;
  store: Pick<Store, 'get' | 'run' | 'withTransaction'>;
  logger: Logger;
  /** The database, as logs may show it (no password). */
  location: string;
  onMessage(payload: string): void;
}

/**
 * Messages between the processes sharing one PostgreSQL database: `send` is a NOTIFY through the
 * pool; each process LISTENs on a connection of its own, reopened (with backoff) when it drops.
 * PostgreSQL delivers the notifications of one sender in the order sent, its own included (the
 * caller skips those). Messages sent while a listener is reconnecting are lost to it: callers
 * that need state read it from the tables, the channel only tells them when to look.
 */
export class PgChannel {
  private client: Client | undefined;
  private closed = false;
  private retryMs = 500;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Set while a stored message is being read: later ones wait for it. */
  private reading: Promise<void> | undefined;
  /** The last send: the next waits for it. */
  private sending: Promise<void> = Promise.resolve();
  private readonly cleanup: NodeJS.Timeout;

  private constructor(private readonly options: PgChannelOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.name)) throw new Error(`channel name ${options.name} is not an identifier`);
    this.cleanup = setInterval(() => void this.deleteOld(), STORED_MESSAGE_TTL_S * 1000);
    this.cleanup.unref();
  }

  static async open(options: PgChannelOptions): Promise<PgChannel> {
    const channel = new PgChannel(options);
    await options.store.withTransaction(async (tx) => {
      // Masters starting together: CREATE TABLE IF NOT EXISTS alone can still collide.
      await tx.get("SELECT pg_advisory_xact_lock(hashtext('runner _store_messages'))");
      await tx.run(
        'CREATE TABLE IF NOT EXISTS _store_messages (id BIGSERIAL PRIMARY KEY, channel TEXT NOT NULL, body TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
    });
    await channel.connect();
    return channel;
  }

  /**
   * Sends `payload` to every listener of the channel (this process's too); resolves once sent.
   * Sends go one after the other: two NOTIFYs on two pooled connections (or a stored message's
   * INSERT before its NOTIFY) could otherwise reach the server out of order.
   */
  send(payload: string): Promise<void> {
    const sent = this.sending.then(() => this.sendNow(payload));
    this.sending = sent.catch(() => undefined);
    return sent;
  }

  private async sendNow(payload: string): Promise<void> {
    const { store, name } = this.options;
    let text = payload;
    if (Buffer.byteLength(payload) > MAX_NOTIFY_BYTES) {
      const row = await store.get<{ id: number }>(
        'INSERT INTO _store_messages (channel, body) VALUES (?, ?) RETURNING id',
        [name, payload],
      );
      text = `@${row?.id}`;
    }
    await store.get('SELECT pg_notify(?, ?)', [name, text]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.cleanup);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const { default: pg } = await import('pg');
    const client = new pg.Client(this.options.connection);
    client.on('notification', (note: Notification) => this.received(note.payload ?? ''));
    // An error is followed by `end`; reconnecting once is enough.
    client.on('error', (error) => this.options.logger.warn(`channel ${this.options.name}: ${error.message}`));
    client.on('end', () => this.dropped(client));
    await client.connect();
    await client.query(`LISTEN ${this.options.name}`);
    if (this.closed) return void client.end().catch(() => undefined);
    this.client = client;
    this.retryMs = 500;
  }

  private dropped(client: Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.options.logger.warn(
      `the channel ${this.options.name} to PostgreSQL at ${this.options.location} was lost; reconnecting`,
    );
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => {
      this.connect().catch((error: Error) => {
        this.options.logger.warn(`channel ${this.options.name}: reconnecting failed (${error.message})`);
        this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
        this.scheduleReconnect();
      });
    }, this.retryMs);
    this.reconnectTimer.unref();
  }

  /** Delivered in the order received: a stored message is read before any later one is delivered. */
  private received(text: string): void {
    if (!text.startsWith('@') && this.reading === undefined) return this.deliver(text);
    const read = (this.reading ?? Promise.resolve()).then(() => this.readAndDeliver(text));
    this.reading = read;
    void read.then(() => {
      if (this.reading === read) this.reading = undefined;
    });
  }

  private async readAndDeliver(text: string): Promise<void> {
    if (!text.startsWith('@')) return this.deliver(text);
    try {
      const row = await this.options.store.get<{ body: string }>('SELECT body FROM _store_messages WHERE id = ?', [
        Number(text.slice(1)),
      ]);
      if (row) this.deliver(row.body);
      else this.options.logger.warn(`channel ${this.options.name}: stored message ${text} is gone`);
    } catch (error) {
      this.options.logger.warn(
        `channel ${this.options.name}: reading message ${text} failed: ${(error as Error).message}`,
      );
    }
  }

  private deliver(text: string): void {
    try {
      this.options.onMessage(text);
    } catch (error) {
      this.options.logger.warn(`channel ${this.options.name}: a message failed: ${(error as Error).message}`);
    }
  }

  private async deleteOld(): Promise<void> {
    await this.options.store
      .run(
        `DELETE FROM _store_messages WHERE channel = ? AND created_at < now() - interval '${STORED_MESSAGE_TTL_S} seconds'`,
        [this.options.name],
      )
      .catch(() => undefined);
  }
}
