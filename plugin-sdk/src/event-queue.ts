import { createServiceRef } from './service-ref.js';

/** Where a stored event is (service.md section 2, "Event (queue entry)"). */
export type EventStatus = 'pending' | 'processing' | 'completed' | 'failed';

/** One event of the durable queue, as the event-queue plugin stores and serves it. */
export interface QueuedEvent {
  /** The bus event's id: sortable by emission, unique across processes. */
  id: string;
  event_type: string;
  status: EventStatus;
  /** Milliseconds since the Unix epoch, when the event was emitted. */
  timestamp: number;
  data: Record<string, unknown>;
  /** How many times a worker took it (a retry or a reclaimed lease adds one). */
  attempts: number;
  last_error: string | null;
  /**
   * How many hook-started flows lie between a person's action and this event (0: none). Hooks do
   * not run on events deeper than `events.max_depth` (the loop guard).
   */
  depth: number;
}

/** What one handler (a hook) came to on one event, retries included. */
export interface HandlerOutcome {
  success: boolean;
  /** Executions made (1 + the retries used). */
  attempts: number;
  durationMs: number;
  output?: string;
  error?: string;
}

/** A handler of events: an enabled hook, as the queue sees it. */
export interface EventHandlerRef {
  id: number;
  name: string;
}

/**
 * What runs on stored events (the event-hooks plugin): the queue asks which handlers match an
 * event's type and runs them one after another in that order, recording each one's outcome per
 * event (claimed in the database: a handler never runs twice for one event).
 */
export interface EventHandlers {
  /**
   * The enabled handlers for an event of `eventType`, in the order they run (priority, then id).
   * `stack`: the stack of the run the event is of (its payload's `stack`), if any; a handler
   * bound to a stack matches only such events.
   */
  matching(eventType: string, stack?: string): EventHandlerRef[];
  /** Runs one handler on the event, its retries included; never rejects (a failure is an outcome). */
  run(handler: EventHandlerRef, event: QueuedEvent): Promise<HandlerOutcome>;
}

/** The durable event queue (the event-queue plugin). */
export interface EventQueue {
  /** Who runs hooks on events; one at a time (the function it returns removes them). */
  setHandlers(handlers: EventHandlers): () => void;
  /**
   * Says that a run was started by a handler processing an event of `depth`: that run's events
   * get `depth + 1` (the loop guard of hooks starting flows whose events fire them again).
   */
  noteHandlerRun(runId: string, depth: number): void;
  /** The deepest event hooks still run on (`events.max_depth`). */
  readonly maxDepth: number;
  /** The event types the queue keeps (so the only ones handlers run on), each with what it means. */
  readonly storedTypes: readonly StoredEventType[];
}

/** An event type the queue keeps, with what it means (`runner hook events` shows them). */
export interface StoredEventType {
  name: string;
  description: string;
}

export const EventQueueRef = createServiceRef<EventQueue>({
  id: 'events.queue',
  description: 'the durable queue of domain events that hooks run on (event-queue plugin)',
});
