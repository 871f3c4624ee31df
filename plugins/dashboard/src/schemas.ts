import { Type } from '@runner/plugin-sdk/schema';

/** The `system_metrics` message's data (service.md section 6), also the answer of GET /metrics. */
export const SystemMetricsSchema = Type.Object({
  cpu: Type.Object({ usage_percent: Type.Number(), cores: Type.Integer() }),
  memory: Type.Object({
    used: Type.Number({ description: 'bytes' }),
    total: Type.Number({ description: 'bytes' }),
    used_percent: Type.Number(),
  }),
  disk: Type.Object({
    used: Type.Number({ description: 'bytes, file system of the data directory' }),
    total: Type.Number({ description: 'bytes' }),
    used_percent: Type.Number(),
  }),
  network: Type.Object({
    bytes_sent: Type.Number({ description: 'bytes sent since boot, every interface but loopback' }),
    bytes_recv: Type.Number({ description: 'bytes received since boot, every interface but loopback' }),
    bytes_sent_per_sec: Type.Optional(Type.Number()),
    bytes_recv_per_sec: Type.Optional(Type.Number()),
  }),
});

export const SystemAlertSchema = Type.Object({
  resource: Type.Union([Type.Literal('cpu'), Type.Literal('memory'), Type.Literal('disk')]),
  state: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
  value: Type.Number({ description: 'percent' }),
  threshold: Type.Number({ description: 'percent' }),
  message: Type.String(),
});

const Count = Type.Integer({ minimum: 0 });

export const RecentExecutionSchema = Type.Object({
  id: Type.String(),
  workflow_name: Type.String(),
  status: Type.String(),
  trigger: Type.Optional(Type.String()),
  started_at: Type.String({ description: 'ISO 8601 UTC' }),
  duration: Type.Optional(Type.Number({ description: 'seconds' })),
});

/** One tile a plugin contributed (DashboardTilesRef), as read for the caller. */
export const DashboardTileSchema = Type.Object({
  id: Type.String({ description: 'stable, kebab-case: agents, executions, workflows' }),
  title: Type.String(),
  href: Type.String({ description: 'the UI page the tile opens' }),
  order: Type.Number({ description: 'lower first' }),
  value: Type.Optional(Type.Number({ description: 'absent when the tile could not be read' })),
  detail: Type.Optional(Type.String({ description: 'a short second line: 3 active' })),
  error: Type.Optional(Type.String({ description: 'why the tile could not be read; the others are unaffected' })),
});

/**
 * GET /dashboard. Counts of service.md's dashboard whose feature exists: agents, and executions
 * (the runs of workflows). Saved workflows, hooks and events come with their own plugins, which
 * will add their counts; a count that is absent is a feature that is not installed.
 */
export const DashboardSchema = Type.Object({
  tiles: Type.Array(DashboardTileSchema, {
    description: "the counts feature plugins contribute, in order, only those the caller's role may see",
  }),
  agents: Type.Optional(
    Type.Object(
      { total: Count, online: Count, offline: Count, warning: Count, error: Count },
      {
        description: 'absent when the master has no agent transport',
      },
    ),
  ),
  executions: Type.Optional(
    Type.Object({
      total: Count,
      running: Count,
      last_24h: Count,
      succeeded_24h: Count,
      failed_24h: Count,
      cancelled_24h: Count,
      recent: Type.Array(RecentExecutionSchema, { description: 'the 10 latest, newest first' }),
    }),
  ),
  system: Type.Union([SystemMetricsSchema, Type.Null()], { description: 'the latest sample; null before the first' }),
  alerts: Type.Array(SystemAlertSchema, { description: 'thresholds crossed now' }),
  thresholds: Type.Object({ cpu: Type.Number(), memory: Type.Number(), disk: Type.Number() }),
});
