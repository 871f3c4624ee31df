// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them.
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { EventDetailSchema, EventListQuery, EventListSchema, EventParams, PendingQuery } from './schemas.js';

const tags = ['events'];

export const getEvents = declareRoute({
  method: 'GET',
  path: '/events',
  summary: 'list stored events, newest first (filters type, status, time; paginated)',
  tags,
  permission: Permissions.eventView,
  query: EventListQuery,
  responses: { 200: EventListSchema },
});

export const getEventsPending = declareRoute({
  method: 'GET',
  path: '/events/pending',
  summary: 'events waiting for their hooks, oldest first',
  tags,
  permission: Permissions.eventView,
  query: PendingQuery,
  responses: { 200: EventListSchema },
});

export const getEventsId = declareRoute({
  method: 'GET',
  path: '/events/:id',
  summary: "one event with each hook's result on it",
  tags,
  permission: Permissions.eventView,
  params: EventParams,
  responses: { 200: EventDetailSchema },
});

export const postEventsIdRetry = declareRoute({
  method: 'POST',
  path: '/events/:id/retry',
  summary: 'a failed event back to pending: the hooks that failed on it run again',
  tags,
  permission: Permissions.eventRetry,
  params: EventParams,
  responses: { 200: EventDetailSchema, 409: { description: 'the event is not failed' } },
});

/** Every route above, for the plugin's definition. */
export const routes = [getEvents, getEventsPending, getEventsId, postEventsIdRetry];
