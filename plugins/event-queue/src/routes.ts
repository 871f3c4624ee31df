import * as api from './api.js';
import { InvalidInputError, NotFoundError, parseDuration, serve, type HttpRouter } from '@runner/plugin-sdk';
import type { EventStore } from './event-store.js';
import type { DurableQueue } from './queue.js';

/** `/api/v1/events`: the list with filters, the pending ones, one with its hook results, retry. */
export function registerEventRoutes(router: HttpRouter, events: EventStore, queue: DurableQueue): void {
  router.add(
    serve(api.getEvents, async ({ query }) => {
      const limit = query.limit ?? 50;
      const offset = query.offset ?? 0;
      const page = await events.list({
        type: query.type,
        status: query.status,
        since: query.since === undefined ? undefined : instant(query.since, 'since', true),
        until: query.until === undefined ? undefined : instant(query.until, 'until', false),
        limit,
        offset,
      });
      return { ...page, limit, offset };
    }),
  );

  router.add(
    serve(api.getEventsPending, async ({ query }) => {
      const limit = query.limit ?? 100;
      const page = await events.list({ status: 'pending', limit, offset: 0 });
      return { events: page.events.reverse(), total: page.total, limit, offset: 0 };
    }),
  );

  router.add(serve(api.getEventsId, ({ params }) => detail(events, params.id)));

  router.add(
    serve(api.postEventsIdRetry, async ({ params }) => {
      await events.retry(params.id, Date.now());
      queue.wake();
      return detail(events, params.id);
    }),
  );
}

async function detail(events: EventStore, id: string) {
  const event = await events.get(id);
  if (!event) throw new NotFoundError(`event "${id}" does not exist`, { details: { event: id } });
  return { ...event, hooks: await events.results(id) };
}

/**
 * A time filter as milliseconds: Unix milliseconds, ISO 8601, or (for `since`) a duration ago
 * such as `1h`, as the logs filter takes it.
 */
export function instant(text: string, field: string, ago: boolean, now = Date.now()): number {
  if (/^\d+$/.test(text)) return Number(text);
  const parsed = Date.parse(text);
  if (!Number.isNaN(parsed)) return parsed;
  if (ago) {
    try {
      return now - parseDuration(text);
    } catch {
      // Said below with every accepted form.
    }
  }
  throw new InvalidInputError(
    `${field}: "${text}" is not ISO 8601, Unix milliseconds${ago ? ' or a duration such as 1h' : ''}`,
    { field },
  );
}
