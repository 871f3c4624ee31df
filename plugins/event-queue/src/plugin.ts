import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  ClusterRef,
  DashboardTilesRef,
  EventQueueRef,
  HttpRouterRef,
  MetricsRef,
  Permissions,
  StoreRef,
  WebSocketHubRef,
  definePlugin,
  optional,
  parseDuration,
  type BusEvent,
  type MetricsService,
  type RunnerConfig,
  type WebSocketHub,
  type WorkflowEventPayload,
} from '@runner/plugin-sdk';
import { eventsCommand } from './commands.js';
import { routes } from './api.js';

/** The event-queue's keys (the plugin entry: nothing heavy). */
const CONFIG = {
  'events.lease_timeout': {
    schema: { type: 'string' },
    default: '30s',
    help: 'a processing event whose master stops renewing its lease this long is taken by another (a duration)',
  },
  'events.max_depth': {
    schema: { type: 'integer', minimum: 0 },
    default: 3,
    help: 'hooks run on events at most this many hook-started flows deep; deeper events fail unprocessed (the loop guard)',
  },
  'events.concurrency': {
    schema: { type: 'integer', minimum: 1 },
    default: 32,
    help: "events a master processes at once (each event's hooks run one after another)",
  },
  'events.retention.max_age': {
    schema: { type: 'string' },
    default: '7d',
    help: 'finished events older than this are removed with their hook results (a duration; 0 keeps them by age)',
  },
  'events.retention.max_events': {
    schema: { type: 'integer', minimum: 0 },
    default: 100_000,
    help: 'at most this many events are kept, the newest finished ones (0: no limit by count)',
  },
} as const;

const duration = (config: RunnerConfig, key: string) => parseDuration(config.get<string>(key));

/**
 * The durable event queue: every stored bus event becomes a row, claimed with a lease by one
 * master, processed by the hooks that match it (the event-hooks plugin, through EventQueueRef).
 */
export const plugin = definePlugin({
  id: 'event-queue',
  version: '0.1.0',
  routes,
  description: 'The durable event queue hooks run on: events stored, claimed, retried; /api/v1/events',
  profiles: ['master'],
  provides: [EventQueueRef],
  dependsOn: {
    store: StoreRef,
    router: optional(HttpRouterRef),
    hub: optional(WebSocketHubRef),
    cluster: optional(ClusterRef),
    tiles: optional(DashboardTilesRef),
    metrics: optional(MetricsRef),
  },
  config: CONFIG,
  async schema() {
    const { EVENT_MIGRATIONS } = await import('./event-store.js');
    return [{ owner: 'event-queue', migrations: EVENT_MIGRATIONS }];
  },
  commands: [eventsCommand],
  async setup(ctx, { store, router, hub, cluster, tiles, metrics }) {
    const [{ EventStore }, { DurableQueue }, { eventRetention }, { registerEventRoutes }, { QueueDepth }] =
      await Promise.all([
        import('./event-store.js'),
        import('./queue.js'),
        import('./retention.js'),
        import('./routes.js'),
        import('./depth.js'),
      ]);
    let depth: InstanceType<typeof QueueDepth> | undefined;
    const events = new EventStore(store, (delta) => depth?.changed(delta));
    await events.open();
    if (metrics) {
      depth = new QueueDepth(() => events.depth(), !cluster?.shared, ctx.logger);
      await depth.start();
    }
    const processed = metrics && depth && queueMetrics(metrics, depth);
    const queue = new DurableQueue({
      store: events,
      owner: cluster?.masterId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
      leaseMs: duration(ctx.config, 'events.lease_timeout'),
      maxDepth: ctx.config.get<number>('events.max_depth'),
      concurrency: ctx.config.get<number>('events.concurrency'),
      exclusive: !cluster?.shared,
      logger: ctx.logger,
      onUpdate: (event) => {
        hub?.broadcast('event_update', {
          id: event.id,
          event_type: event.event_type,
          status: event.status,
          data: event.data,
        });
        if (event.status === 'completed' || event.status === 'failed') processed?.inc({ status: event.status });
      },
    });
    ctx.provide(EventQueueRef, queue);
    const offs = [ctx.events.onAny((event) => queue.accept(event))];
    if (hub) offs.push(ctx.events.onAny((event) => sendWorkflowUpdate(hub, event)));
    // Taken only once every plugin is set up: the hooks plugin has said which hooks exist.
    ctx.lifecycle.ready.tapPromise('event-queue', () => queue.start());
    const unretain = store.retain(
      eventRetention(store, {
        maxAgeMs: duration(ctx.config, 'events.retention.max_age'),
        maxEvents: ctx.config.get<number>('events.retention.max_events'),
      }),
    );
    const untile = tiles?.contribute({
      id: 'events',
      title: 'Pending events',
      href: '/events',
      permission: Permissions.eventView,
      order: 50,
      async read() {
        const { pending, recent } = await events.counts(Date.now() - 24 * 3600_000);
        return { value: pending, detail: `${recent} in the last 24 h` };
      },
    });
    if (router) registerEventRoutes(router, events, queue);
    ctx.onStop(async () => {
      for (const off of offs) off();
      untile?.();
      unretain();
      depth?.stop();
      await queue.flushed();
      await queue.stop();
    });
  },
});

/**
 * The queue's metrics: its depth by status, as QueueDepth holds it (a scrape does not read the
 * store), and the events this master ended by outcome (no event ids or types as labels: bounded).
 */
function queueMetrics(metrics: MetricsService, queueDepth: { current(): { pending: number; processing: number } }) {
  metrics.gauge<'status'>({
    name: 'runner_event_queue_depth',
    help: 'stored events waiting for their hooks (pending) or being processed',
    labelNames: ['status'],
    collect(gauge) {
      const depth = queueDepth.current();
      gauge.set({ status: 'pending' }, depth.pending);
      gauge.set({ status: 'processing' }, depth.processing);
    },
  });
  return metrics.counter<'status'>({
    name: 'runner_events_processed_total',
    help: 'events this master finished processing, by outcome (completed or failed)',
    labelNames: ['status'],
  });
}

/** `workflow_update` on the WebSocket: a run started or ended (service.md leaves its fields open). */
function sendWorkflowUpdate(hub: WebSocketHub, event: BusEvent): void {
  if (!event.type.startsWith('workflow.')) return;
  const data = event.data as WorkflowEventPayload;
  hub.broadcast('workflow_update', {
    change: event.type.slice('workflow.'.length),
    run_id: data.run_id,
    workflow_name: data.workflow_name,
    status: data.status,
    duration: data.duration,
    started_at: data.started_at,
    completed_at: data.completed_at,
  });
}
