import { randomBytes } from 'node:crypto';
import type { BusEvent, EventBus, EventType, Logger, RunnerEvents } from '@runner/plugin-sdk';

const PROCESS_TAG = randomBytes(3).toString('hex');

type Handler = (event: BusEvent) => void;
interface Subscription {
  handler: Handler;
  /** The plugin that subscribed, so a throwing subscriber is named in the log. */
  owner: string;
}

/**
 * The kernel's bus. Delivery is synchronous, so an emitter knows every subscriber saw the event
 * when `emit` returns (the store-backed event queue relies on that ordering). A subscriber that
 * throws is logged and skipped; it never stops delivery to the others or fails the emitter.
 */
export class KernelEventBus {
  private readonly byType = new Map<string, Subscription[]>();
  private readonly any: Subscription[] = [];

  private lastMs = 0;
  private sequence = 0;

  constructor(private readonly logger: Logger) {}

  /**
   * Sortable ids: milliseconds (base 36, fixed width) then a counter within the millisecond, so
   * string order is emission order within a process; a random tail keeps processes apart.
   */
  private nextId(now: number): string {
    if (now === this.lastMs) this.sequence++;
    else {
      this.lastMs = now;
      this.sequence = 0;
    }
    return `${now.toString(36).padStart(9, '0')}${this.sequence.toString(36).padStart(4, '0')}${PROCESS_TAG}`;
  }

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
    const event = { id: this.nextId(now), type, timestamp: now, data } as BusEvent;
    // Copies, so a handler that unsubscribes during delivery does not skip its neighbour.
    for (const sub of [...(this.byType.get(type) ?? [])]) this.deliver(sub, event);
    for (const sub of [...this.any]) this.deliver(sub, event);
  }

  private deliver(sub: Subscription, event: BusEvent): void {
    try {
      sub.handler(event);
    } catch (error) {
      this.logger.error(`plugin ${sub.owner}: subscriber of ${event.type} threw`, {
        plugin: sub.owner,
        event: event.type,
        error: error instanceof Error ? error.message : String(error),
      });
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
