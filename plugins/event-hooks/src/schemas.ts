import { Type } from '@runner/plugin-sdk/schema';
import {
  DEFAULT_PRIORITY,
  DEFAULT_TIMEOUT_SECONDS,
  MAX_RETRIES,
  MAX_SCRIPT_BYTES,
  MAX_TIMEOUT_SECONDS,
} from './hook-store.js';

/** Request and response schemas of /api/v1/hooks. Names and event types are checked by the store, said in words. */
export const HookSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  event_type: Type.String({ description: 'an event name (workflow.failed) or a pattern (task.*, *)' }),
  stack: Type.Union([Type.String(), Type.Null()], {
    description: 'hooks of a stack fire only for its runs, once stacks exist',
  }),
  enabled: Type.Boolean(),
  priority: Type.Integer({ description: 'lower runs first; ties by id' }),
  timeout: Type.Number({ description: 'seconds one execution may take' }),
  retries: Type.Integer({ description: 'executions after a failed one, on the same event' }),
  script: Type.String({ description: 'Lua 5.3; sees hook.event, hook.payload, hook.id, every module, flows.run' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  executions: Type.Integer({ description: 'executions in the kept history' }),
  success_rate: Type.Union([Type.Number(), Type.Null()], { description: 'percent of those that succeeded' }),
  last_execution: Type.Union([Type.String(), Type.Null()]),
});

export const HookListSchema = Type.Object({ hooks: Type.Array(HookSchema), total: Type.Integer() });

const fields = {
  event_type: Type.String({ minLength: 1, description: 'an event name or a pattern such as task.*' }),
  script: Type.String({ minLength: 1, maxLength: MAX_SCRIPT_BYTES, description: 'the Lua script (compiled at save)' }),
  stack: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  priority: Type.Optional(Type.Integer({ default: DEFAULT_PRIORITY, description: 'lower runs first; ties by id' })),
  timeout: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_TIMEOUT_SECONDS,
      default: DEFAULT_TIMEOUT_SECONDS,
      description: 'seconds',
    }),
  ),
  retries: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RETRIES, default: 0 })),
};

export const CreateHookBody = Type.Object(
  { name: Type.String({ minLength: 1, description: 'unique; letters, digits, ".", "_", "-"' }), ...fields },
  { additionalProperties: false },
);

export const UpdateHookBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    event_type: Type.Optional(fields.event_type),
    script: Type.Optional(fields.script),
    stack: fields.stack,
    enabled: fields.enabled,
    priority: fields.priority,
    timeout: fields.timeout,
    retries: fields.retries,
  },
  { additionalProperties: false },
);

export const HookParams = Type.Object({ id: Type.String({ minLength: 1, description: 'the hook id, or its name' }) });

export const HistoryQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  },
  { additionalProperties: false },
);

export const ExecutionSchema = Type.Object({
  id: Type.Integer(),
  executed_at: Type.String({ description: 'ISO 8601 UTC' }),
  event_id: Type.String(),
  event_type: Type.String(),
  attempt: Type.Integer({ description: '1, then 2... for its retries on the event' }),
  success: Type.Boolean(),
  duration_ms: Type.Integer(),
  output: Type.Union([Type.String(), Type.Null()], { description: 'what it printed (capped)' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const HistorySchema = Type.Object({ executions: Type.Array(ExecutionSchema), total: Type.Integer() });

export const TestHookBody = Type.Object(
  {
    event_type: Type.Optional(
      Type.String({ minLength: 1, description: "default: the hook's event (a sample one for a pattern)" }),
    ),
    payload: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'default: a sample payload of the event' }),
    ),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'modules do not act and flows do not start' })),
  },
  { additionalProperties: false },
);

export const TestResultSchema = Type.Object({
  success: Type.Boolean(),
  duration_ms: Type.Integer(),
  output: Type.String(),
  error: Type.Union([Type.String(), Type.Null()]),
  event_type: Type.String(),
  payload: Type.Record(Type.String(), Type.Unknown()),
  dry_run: Type.Boolean(),
  flows: Type.Array(
    Type.Object({
      name: Type.String(),
      vars: Type.Record(Type.String(), Type.String()),
      run_id: Type.Optional(Type.String()),
      outcome: Type.String(),
    }),
  ),
});

export const HookEventsSchema = Type.Object({
  events: Type.Array(
    Type.Object({
      name: Type.String({ description: 'what a hook names in event_type' }),
      pattern: Type.Boolean({ description: 'a pattern over several events (task.*, *)' }),
      description: Type.String(),
    }),
  ),
});
