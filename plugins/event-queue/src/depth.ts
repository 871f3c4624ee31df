import type { Logger } from '@runner/plugin-sdk';

/** Events waiting for their hooks (pending) or being processed, across the store. */
export interface Depth {
  pending: number;
  processing: number;
}

/** How often a master sharing the store reads the depth again (others' writes are not seen here). */
export const SHARED_REFRESH_MS = 5_000;

/**
 * The queue's depth for `runner_event_queue_depth`, held in memory so that a scrape reads it
 * without waiting for the store: the awaited read queued behind writes (and 1,000 agents'
 * heartbeats ran meanwhile), which was most of the scrape's p99.
 *
 * With one master on the store (exclusive: the embedded store, or PostgreSQL without the cluster)
 * every status change is this master's, so the figure is read once at start and then kept from
 * its own writes (EventStore reports each): exact. With several masters the others' writes are not
 * seen here, so the figure is read again every SHARED_REFRESH_MS in the background instead: at most
 * that old, and never a scrape's wait.
 */
export class QueueDepth {
  readonly #read: () => Promise<Depth>;
  readonly #exclusive: boolean;
  readonly #logger: Pick<Logger, 'warn'>;
  #depth: Depth = { pending: 0, processing: 0 };
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> | undefined;

  constructor(read: () => Promise<Depth>, exclusive: boolean, logger: Pick<Logger, 'warn'>) {
    this.#read = read;
    this.#exclusive = exclusive;
    this.#logger = logger;
  }

  /** Reads the depth once (before this master writes any event), then keeps it as the class says. */
  async start(): Promise<void> {
    await this.refresh();
    if (!this.#exclusive) this.#timer = setInterval(() => void this.refresh(), SHARED_REFRESH_MS).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** The figure now: no read of the store. */
  current(): Depth {
    return { ...this.#depth };
  }

  /** This master changed statuses: counted when it alone writes (else the next read sees it). */
  changed(delta: Partial<Depth>): void {
    if (!this.#exclusive) return;
    this.#depth.pending = Math.max(0, this.#depth.pending + (delta.pending ?? 0));
    this.#depth.processing = Math.max(0, this.#depth.processing + (delta.processing ?? 0));
  }

  /** Reads the depth from the store (one read at a time); a failed read keeps the last figure. */
  refresh(): Promise<void> {
    this.#reading ??= this.#read()
      .then((depth) => {
        this.#depth = depth;
      })
      .catch((error: Error) => this.#logger.warn(`reading the event queue's depth failed: ${error.message}`))
      .finally(() => {
        this.#reading = undefined;
      });
    return this.#reading;
  }
}
