import { Type } from '@runner/plugin-sdk/schema';

/** Request and response schemas of /api/v1/events. */
const Status = Type.Union(
  [Type.Literal('pending'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')],
  { description: 'pending, processing, completed (every hook succeeded, or none matched) or failed' },
);

export const EventSchema = Type.Object({
  id: Type.String({ description: 'the bus event id: sorts by emission' }),
  event_type: Type.String({ description: 'workflow.failed, task.completed, agent.connected, ...' }),
  status: Status,
  timestamp: Type.Integer({ description: 'milliseconds since the Unix epoch, when emitted' }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the payload (see the README for each type)' }),
  attempts: Type.Integer({ description: 'times a worker took it' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  depth: Type.Integer({ description: 'hook-started flows between a person and this event (loop guard)' }),
});

export const HookResultSchema = Type.Object({
  hook_id: Type.Integer(),
  hook_name: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempts: Type.Integer({ description: 'executions made (1 + retries used)' }),
  started_at: Type.String({ description: 'ISO 8601 UTC' }),
  duration_ms: Type.Union([Type.Integer(), Type.Null()]),
  output: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const EventDetailSchema = Type.Intersect([
  EventSchema,
  Type.Object({ hooks: Type.Array(HookResultSchema, { description: "each hook's result, in the order they ran" }) }),
]);

export const EventListSchema = Type.Object({
  events: Type.Array(EventSchema),
  total: Type.Integer({ description: 'events matching the filters' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const EventListQuery = Type.Object(
  {
    type: Type.Optional(Type.String({ minLength: 1, description: 'an event name, or a pattern such as task.*' })),
    status: Type.Optional(Status),
    since: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'emitted at or after: ISO 8601, Unix milliseconds, or a duration ago (1h)',
      }),
    ),
    until: Type.Optional(Type.String({ minLength: 1, description: 'emitted before: ISO 8601 or Unix milliseconds' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'page size' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  },
  { additionalProperties: false },
);

export const PendingQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })) },
  { additionalProperties: false },
);

export const EventParams = Type.Object({ id: Type.String({ minLength: 1, description: 'the event id' }) });
