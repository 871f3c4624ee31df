import type {
  EventHandlerRef,
  EventHandlers,
  HandlerOutcome,
  Logger,
  QueuedEvent,
  WebSocketHub,
} from '@runner/plugin-sdk';
import type { ExecutionResult, HookRunner } from './hook-runner.js';
import type { HookStore } from './hook-store.js';
import { sampleEventType, samplePayload } from './samples.js';

/**
 * What the event queue runs on each event: the matching enabled hooks, each with its retries
 * (one execution after another on the same event), every execution kept in the hook's history and
 * announced as `hook_execution`.
 */
export class HookHandlers implements EventHandlers {
  constructor(
    private readonly hooks: HookStore,
    private readonly runner: HookRunner,
    private readonly logger: Logger,
    private readonly hub: WebSocketHub | undefined,
    /** Told of each execution's duration (metrics). */
    private readonly onExecution?: (hook: { id: number; name: string }, result: ExecutionResult) => void,
  ) {}

  matching(eventType: string, stack?: string): EventHandlerRef[] {
    return this.hooks.matching(eventType, stack);
  }

  async run(handler: EventHandlerRef, event: QueuedEvent): Promise<HandlerOutcome> {
    const started = performance.now();
    let last: ExecutionResult | undefined;
    let attempt = 0;
    for (;;) {
      // Read at each attempt: a hook changed or deleted meanwhile runs as it is now.
      const hook = this.hooks.row(handler.id);
      if (!hook) return { success: false, attempts: attempt, durationMs: 0, error: 'the hook was deleted' };
      attempt += 1;
      const executedAt = Date.now();
      last = await this.runner.run(hook, {
        eventType: event.event_type,
        payload: event.data,
        eventId: event.id,
        depth: event.depth,
        attempt,
        dryRun: false,
      });
      await this.hooks
        .record(hook.id, {
          executedAt,
          event_id: event.id,
          event_type: event.event_type,
          attempt,
          success: last.success,
          duration_ms: last.durationMs,
          output: last.output || null,
          error: last.error ?? null,
        })
        .catch((error: Error) => this.logger.warn(`keeping hook ${hook.name}'s execution failed: ${error.message}`));
      this.hub?.broadcast('hook_execution', {
        hook_id: hook.id,
        hook_name: hook.name,
        success: last.success,
        duration_ms: Math.round(last.durationMs),
      });
      this.onExecution?.(hook, last);
      if (last.success || attempt > hook.retries) break;
    }
    return {
      success: last.success,
      attempts: attempt,
      durationMs: performance.now() - started,
      output: last.output || undefined,
      error: last.error,
    };
  }

  /** `POST /hooks/:id/test`: one execution on a sample or given payload, kept nowhere. */
  async test(ref: string, input: { event_type?: string; payload?: Record<string, unknown>; dry_run?: boolean }) {
    const hook = this.hooks.require(ref);
    const eventType = input.event_type ?? sampleEventType(hook.event_type);
    const payload = input.payload ?? samplePayload(eventType);
    const dryRun = input.dry_run ?? false;
    const result = await this.runner.run(hook, { eventType, payload, eventId: 'test', depth: 0, attempt: 1, dryRun });
    return {
      success: result.success,
      duration_ms: Math.round(result.durationMs),
      output: result.output,
      error: result.error ?? null,
      event_type: eventType,
      payload,
      dry_run: dryRun,
      flows: result.flows,
    };
  }
}
