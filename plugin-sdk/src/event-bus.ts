import { randomBytes } from 'node:crypto';
import type { BusEvent, EventBus, EventType, RunnerEvents } from './events.js';
import type { Logger } from './logger.js';
import type { Redactor } from './redactor.js';

type Handler = (event: BusEvent) => unknown;
interface Subscription {
  handler: Handler;
  /** The plugin that subscribed, so a failing subscriber is named in the log. */
  owner: string;
}

// Keeps the ids of two processes (a master and its CLI, two agents) apart.
const PROCESS_TAG = randomBytes(3).toString('hex');

export interface EventHubOptions {
  logger: Logger;
  /** Every event's data is redacted once, before any subscriber sees it. */
  redactor?: Redactor;
  /** Called with every event as delivered (the test kernel records them). */
  onEmit?: (event: BusEvent) => void;
}

/**
 * The bus behind every plugin's `ctx.events` (the kernel's and the test kernel's).
 *
 * Delivery is synchronous and in subscription order, so an emitter knows every subscriber saw
 * the event when `emit` returns (the store-backed event queue relies on that ordering).
 * Subscribers must therefore not block: one that has slow work to do starts it and returns (an
 * async subscriber's promise is not awaited). A subscriber that throws, or whose promise rejects,
 * is logged with its plugin's id and skipped; it never stops delivery to the others nor fails the
 * emitter.
 *
 * Each event gets an id that sorts in emission order (milliseconds in base 36, fixed width, then
 * a counter within the millisecond, then a per-process tag) and a millisecond timestamp.
 */
export class EventHub {
  private readonly byType = new Map<string, Subscription[]>();
  private readonly any: Subscription[] = [];
  private lastMs = 0;
  private sequence = 0;

  constructor(private readonly options: EventHubOptions) {}

  /** The bus as one plugin sees it: its subscriptions carry its id. */
  forPlugin(owner: string): EventBus {
    return {
      emit: (type, data) => this.emit(type, data),
      on: (type, handler) => this.add(this.listFor(type), { handler: handler as Handler, owner }),
      onAny: (handler) => this.add(this.any, { handler, owner }),
    };
  }

  emit<K extends EventType>(type: K, data: RunnerEvents[K]): void {
    const now = Date.now();
    const safe = this.options.redactor ? this.options.redactor.redact(data) : data;
    const event = { id: this.nextId(now), type, timestamp: now, data: safe } as BusEvent;
    this.options.onEmit?.(event);
    // Copies, so a handler that unsubscribes during delivery does not skip its neighbour.
    const typed = this.byType.get(type);
    if (typed) for (const sub of [...typed]) this.deliver(sub, event);
    for (const sub of [...this.any]) this.deliver(sub, event);
  }

  private nextId(now: number): string {
    // A clock stepping back must not make a later event sort first.
    if (now <= this.lastMs) this.sequence++;
    else {
      this.lastMs = now;
      this.sequence = 0;
    }
    return `${this.lastMs.toString(36).padStart(9, '0')}${this.sequence.toString(36).padStart(4, '0')}${PROCESS_TAG}`;
  }

  private deliver(sub: Subscription, event: BusEvent): void {
    try {
      const result = sub.handler(event);
      if (result instanceof Promise) result.catch((error: unknown) => this.failed(sub, event, error));
    } catch (error) {
      this.failed(sub, event, error);
    }
  }

  private failed(sub: Subscription, event: BusEvent, error: unknown): void {
    try {
      this.options.logger.error(`plugin ${sub.owner}: subscriber of ${event.type} failed`, {
        plugin: sub.owner,
        event: event.type,
        event_id: event.id,
        error: error instanceof Error ? error.message : String(error),
      });
    } catch {
      // A logger that throws must not reach the emitter either.
    }
  }

  private listFor(type: string): Subscription[] {
    let list = this.byType.get(type);
    if (!list) this.byType.set(type, (list = []));
    return list;
  }

  private add(list: Subscription[], sub: Subscription): () => void {
    list.push(sub);
    return () => {
      const at = list.indexOf(sub);
      if (at >= 0) list.splice(at, 1);
    };
  }
}
