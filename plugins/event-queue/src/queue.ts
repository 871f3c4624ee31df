import {
  TurnBatch,
  type BusEvent,
  type EventHandlers,
  type EventQueue,
  type HandlerOutcome,
  type Logger,
  type QueuedEvent,
  type StoredEventType,
} from '@runner/plugin-sdk';
import type { ClaimAnswer, EventFinish, EventStore, HookClaim } from './event-store.js';

/**
 * The events the queue keeps (service.md section 6): every `workflow.*` and `task.*` event, and
 * the agent events that say an agent came, went or changed. The kernel's own (`kernel.*`), the
 * terminal's and token rotations are audited, not kept. What hooks may name is this list (the
 * hooks plugin reads it as EventQueue.storedTypes).
 */
export const STORED_TYPES: readonly StoredEventType[] = Object.freeze([
  { name: 'workflow.started', description: 'a run started' },
  { name: 'workflow.completed', description: 'a run ended (its status says how)' },
  { name: 'workflow.failed', description: 'a run ended failed' },
  { name: 'task.started', description: 'a task of a run started' },
  { name: 'task.completed', description: 'a task ended (its status says how)' },
  { name: 'task.failed', description: 'a task failed' },
  { name: 'agent.connected', description: 'an agent connected to this master' },
  { name: 'agent.disconnected', description: 'an agent went offline' },
  { name: 'agent.status_changed', description: 'a connected agent became warning or error, or online again' },
]);
const STORED = new Set(STORED_TYPES.map((t) => t.name));

export function isStored(type: string): boolean {
  return STORED.has(type);
}

/** How many runs started by hooks the loop guard remembers (the oldest are forgotten first). */
const REMEMBERED_RUNS = 10_000;
/** How often a master looks for work it was not told of: other masters' events, expired leases. */
const POLL_MS = 1_000;

export interface QueueOptions {
  store: EventStore;
  /** This master's id: the owner of the leases it takes. */
  owner: string;
  leaseMs: number;
  maxDepth: number;
  /** Events processed at once by this master (their hooks run one after another). */
  concurrency: number;
  /** True when no other master shares the store: `processing` events left at start are this data directory's dead process's. */
  exclusive: boolean;
  logger: Logger;
  /** Told of each status an event takes (the plugin broadcasts `event_update`). */
  onUpdate: (event: QueuedEvent) => void;
  /** Told of each hook's outcome on an event (metrics). */
  onOutcome?: (handler: { id: number; name: string }, outcome: HandlerOutcome) => void;
  now?: () => number;
}

/**
 * The durable queue: bus events are written `pending` (gathered per turn of the event loop into
 * one statement), then claimed a batch at a time with a lease in the database and processed: the
 * matching hooks run one after another in their order, each one's run on the event claimed first
 * (a hook never runs twice for one event, across crashes and masters).
 */
export class DurableQueue implements EventQueue {
  readonly maxDepth: number;
  readonly storedTypes = STORED_TYPES;
  #handlers: EventHandlers | undefined;
  #buffer: BusEvent[] = [];
  #flushing: Promise<void> | undefined;
  #inFlight = new Set<Promise<void>>();
  #claiming = false;
  #again = false;
  #stopped = false;
  #timers: NodeJS.Timeout[] = [];
  readonly #runDepth = new Map<string, number>();
  readonly #now: () => number;
  // The events of a claimed batch are processed side by side, so their hook claims and finishes
  // come in the same turns: each kind is written a turn at a time, one statement for all.
  readonly #hookClaims: TurnBatch<HookClaim, ClaimAnswer>;
  readonly #hookFinishes: TurnBatch<{ claim: HookClaim; outcome: HandlerOutcome }, void>;
  readonly #eventFinishes: TurnBatch<EventFinish, boolean>;

  constructor(private readonly options: QueueOptions) {
    this.maxDepth = options.maxDepth;
    this.#now = options.now ?? Date.now;
    const { store } = options;
    this.#hookClaims = new TurnBatch((claims) => store.claimHooks(claims));
    this.#hookFinishes = new TurnBatch((finished) => store.finishHooks(finished));
    this.#eventFinishes = new TurnBatch((finished) => store.finishEvents(finished));
  }

  setHandlers(handlers: EventHandlers): () => void {
    this.#handlers = handlers;
    this.wake();
    return () => {
      if (this.#handlers === handlers) this.#handlers = undefined;
    };
  }

  noteHandlerRun(runId: string, depth: number): void {
    this.#runDepth.set(runId, depth);
    if (this.#runDepth.size > REMEMBERED_RUNS) this.#runDepth.delete(this.#runDepth.keys().next().value as string);
  }

  async start(): Promise<void> {
    if (this.options.exclusive) {
      const released = await this.options.store.releaseAll(this.#now());
      if (released)
        this.options.logger.info(`${released} event(s) an earlier process left processing are pending again`);
    }
    this.#timers.push(setInterval(() => this.wake(), POLL_MS).unref());
    this.#timers.push(setInterval(() => this.#renew(), Math.max(this.options.leaseMs / 3, 100)).unref());
    this.wake();
  }

  /** Stops taking events and waits for those in hand (their hooks end or time out). */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    await this.#flushing;
    await Promise.allSettled([...this.#inFlight]);
  }

  /** A bus event: kept if it is of a stored type, written with the others of this turn. */
  accept(event: BusEvent): void {
    if (this.#stopped || !isStored(event.type)) return;
    this.#buffer.push(event);
    if (this.#buffer.length === 1 && !this.#flushing) setImmediate(() => void this.#flush());
  }

  /** Resolves once every event accepted so far is durable. */
  async flushed(): Promise<void> {
    while (this.#flushing || this.#buffer.length) await (this.#flushing ?? this.#flush());
  }

  #flush(): Promise<void> {
    if (this.#flushing || this.#buffer.length === 0) return this.#flushing ?? Promise.resolve();
    const events = this.#buffer;
    this.#buffer = [];
    // Decided once, at the write: an event no enabled hook matches is complete as it is stored.
    // Before the hooks are known (start-up) every event waits `pending` for the claim to decide.
    const idleIds = new Set(
      this.#handlers ? events.filter((e) => this.#matching(e.type, e.data).length === 0).map((e) => e.id) : [],
    );
    const idle = (e: { id: string }) => idleIds.has(e.id);
    this.#flushing = this.options.store
      .insert(events, idle)
      .then(() => this.#stored(events, idle))
      .catch((error: Error) => this.options.logger.error(`storing ${events.length} event(s) failed: ${error.message}`))
      .finally(() => {
        this.#flushing = undefined;
        if (this.#buffer.length) void this.#flush();
      });
    return this.#flushing;
  }

  #stored(events: readonly BusEvent[], idle: (e: { id: string }) => boolean): void {
    let pending = false;
    for (const e of events) {
      const done = idle(e);
      pending ||= !done;
      this.options.onUpdate({
        id: e.id,
        event_type: e.type,
        status: done ? 'completed' : 'pending',
        timestamp: e.timestamp,
        data: e.data as unknown as Record<string, unknown>,
        attempts: 0,
        last_error: null,
        depth: 0,
      });
    }
    if (pending) this.wake();
  }

  /** Looks for events to take now (new ones, a freed slot, expired leases). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = true;
    void this.#claimLoop().finally(() => {
      this.#claiming = false;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  async #claimLoop(): Promise<void> {
    const { store, owner, leaseMs, concurrency, logger } = this.options;
    while (!this.#stopped) {
      const room = concurrency - this.#inFlight.size;
      if (room <= 0) return;
      const now = this.#now();
      let events: QueuedEvent[];
      try {
        events = await store.claim(
          owner,
          now,
          now + leaseMs,
          room,
          (e) => this.#matching(e.event_type, e.data).length > 0,
        );
      } catch (error) {
        logger.warn(`claiming events failed (tried again within a second): ${(error as Error).message}`);
        return;
      }
      if (events.length === 0) return;
      for (const event of events) {
        this.options.onUpdate(event);
        if (event.status !== 'processing') continue;
        const work = this.#process(event)
          .catch((error: Error) => logger.error(`processing event ${event.id} failed: ${error.message}`))
          .finally(() => {
            this.#inFlight.delete(work);
            this.wake();
          });
        this.#inFlight.add(work);
      }
    }
  }

  #matching(type: string, data: unknown) {
    const stack = (data as { stack?: unknown } | null)?.stack;
    return this.#handlers?.matching(type, typeof stack === 'string' ? stack : undefined) ?? [];
  }

  async #process(event: QueuedEvent): Promise<void> {
    const { store, owner } = this.options;
    const runId = typeof event.data.run_id === 'string' ? event.data.run_id : undefined;
    const depth = Math.max(event.depth, (runId && this.#runDepth.get(runId)) || 0);
    if (depth !== event.depth) {
      event.depth = depth;
      await store.setDepth(event.id, depth);
    }
    const failures: string[] = [];
    if (depth > this.maxDepth) {
      failures.push(
        `hooks not run: the event is at depth ${depth}, past events.max_depth ${this.maxDepth} (hooks started flows whose events fired hooks again)`,
      );
    } else {
      for (const handler of this.#matching(event.event_type, event.data)) {
        const error = await this.#runHandler(handler, event);
        if (error !== undefined) failures.push(`${handler.name}: ${error}`);
      }
    }
    const status = failures.length ? 'failed' : 'completed';
    const lastError = failures.length ? failures.join('; ').slice(0, 2000) : null;
    const held = await this.#eventFinishes.add({ id: event.id, owner, status, lastError, now: this.#now() });
    if (held) this.options.onUpdate({ ...event, status, last_error: lastError });
  }

  /** Runs one hook on the event unless it already ran there; the error when it failed. */
  async #runHandler(handler: { id: number; name: string }, event: QueuedEvent): Promise<string | undefined> {
    const claim: HookClaim = {
      eventId: event.id,
      hook: { id: handler.id, name: handler.name },
      owner: this.options.owner,
      now: this.#now(),
    };
    const answer = await this.#hookClaims.add(claim);
    if (!answer.claimed)
      return answer.existing.status === 'succeeded' ? undefined : (answer.existing.error ?? 'failed');
    const handlers = this.#handlers;
    const outcome: HandlerOutcome = handlers
      ? await handlers.run(handler, event)
      : { success: false, attempts: 0, durationMs: 0, error: 'the hooks plugin stopped' };
    await this.#hookFinishes.add({ claim, outcome });
    this.options.onOutcome?.(handler, outcome);
    return outcome.success ? undefined : (outcome.error ?? 'failed');
  }

  #renew(): void {
    if (this.#inFlight.size === 0 || this.#stopped) return;
    this.options.store
      .renew(this.options.owner, this.#now() + this.options.leaseMs)
      .catch((error: Error) => this.options.logger.warn(`renewing event leases failed: ${error.message}`));
  }

  /** Events this master holds now. */
  inFlight(): number {
    return this.#inFlight.size;
  }
}
