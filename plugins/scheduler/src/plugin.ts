import {
  NotificationsRef,
  ClusterRef,
  DashboardTilesRef,
  FlowsRef,
  HttpRouterRef,
  MetricsRef,
  Permissions,
  SchedulesRef,
  StacksRef,
  StoreRef,
  WorkflowEngineRef,
  definePlugin,
  optional,
  parseDuration,
  type RunnerConfig,
} from '@runner/plugin-sdk';
import { resolve } from 'node:path';
import { routes } from './api.js';
import { schedulerCommand } from './commands.js';

export const CONFIG = {
  timezone: 'scheduler.timezone',
  missedAfter: 'scheduler.missed_after',
  smtpUrl: 'scheduler.smtp_url',
  smtpFrom: 'scheduler.smtp_from',
  clockRate: 'scheduler.test_clock_rate',
  clockEpoch: 'scheduler.test_clock_epoch',
  holdAfterClaim: 'scheduler.test_hold_after_claim',
} as const;

/** The master's own zone: what a job without `timezone` is read in. */
const hostZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function workflowDirs(config: RunnerConfig): string[] {
  return config.get<string[]>('engine.workflow_dirs', ['workflows']).map((dir) => resolve(config.dataDir, dir));
}

/**
 * The scheduler: jobs that start a saved flow or a workflow file on a cron schedule, each slot
 * claimed once in the store (across restarts and masters), served at /api/v1/scheduler/jobs.
 */
export const plugin = definePlugin({
  id: 'scheduler',
  version: '0.1.0',
  routes,
  description:
    'Scheduler: cron jobs starting flows or workflow files, each slot claimed once; REST, CLI, notifications',
  profiles: ['master'],
  provides: [SchedulesRef],
  dependsOn: {
    store: StoreRef,
    engine: WorkflowEngineRef,
    router: optional(HttpRouterRef),
    cluster: optional(ClusterRef),
    flows: optional(FlowsRef),
    stacks: optional(StacksRef),
    tiles: optional(DashboardTilesRef),
    metrics: optional(MetricsRef),
    notifications: NotificationsRef,
  },
  config: {
    [CONFIG.timezone]: {
      schema: { type: 'string' },
      default: '',
      help: "IANA time zone of jobs added without one; empty: the master's own zone",
    },
    [CONFIG.missedAfter]: {
      schema: { type: 'string' },
      default: '1m',
      help: 'a slot first seen later than this after its time (the master was down) is a missed one, handled by the job’s missed-run policy',
    },
    [CONFIG.smtpUrl]: {
      schema: { type: 'string' },
      default: '',
      secret: true,
      help: 'SMTP server of e-mail notifications: smtp://host:25, smtps://user:password@host:465; empty: e-mail notifications are not sent (the slot says so)',
    },
    [CONFIG.smtpFrom]: {
      schema: { type: 'string' },
      default: 'runner@localhost',
      help: 'sender of e-mail notifications',
    },
    [CONFIG.clockRate]: {
      schema: { type: 'number', minimum: 1 },
      default: 1,
      help: 'testing only: the scheduler’s clock runs this many times faster than the machine’s from scheduler.test_clock_epoch on',
    },
    [CONFIG.clockEpoch]: {
      schema: { type: 'number', minimum: 0 },
      default: 0,
      help: 'testing only: Unix ms from which the fast clock counts (give every master the same)',
    },
    [CONFIG.holdAfterClaim]: {
      schema: { type: 'string' },
      default: '0s',
      help: 'testing only: wait this long between claiming a slot and starting its run (to kill a master there)',
    },
  },
  async schema() {
    const { SCHEDULER_MIGRATIONS } = await import('./job-store.js');
    return [{ owner: 'scheduler', migrations: SCHEDULER_MIGRATIONS }];
  },
  commands: [schedulerCommand],
  async setup(ctx, { store, engine, router, cluster, flows, stacks, tiles, metrics, notifications }) {
    const [
      { JobStore },
      { Scheduler },
      { SchedulerService },
      { Notifier },
      { registerSchedulerRoutes },
      clocks,
      { latenessMetric },
    ] = await Promise.all([
      import('./job-store.js'),
      import('./scheduler.js'),
      import('./service.js'),
      import('./notify.js'),
      import('./routes.js'),
      import('./clock.js'),
      import('./metrics.js'),
    ]);
    const { config } = ctx;
    const rate = config.get<number>(CONFIG.clockRate);
    const clock =
      rate > 1 ? clocks.fastClock(config.get<number>(CONFIG.clockEpoch) || Date.now(), rate) : clocks.systemClock;
    const jobs = new JobStore(store, ctx.logger);
    await jobs.open();
    const notifier = new Notifier(
      { url: config.get<string>(CONFIG.smtpUrl), from: config.get<string>(CONFIG.smtpFrom) },
      notifications,
    );
    const dirs = workflowDirs(config);
    const scheduler = new Scheduler({
      jobs,
      clock,
      masterId: cluster?.masterId ?? 'local',
      engine,
      flows,
      workflowDirs: dirs,
      notifier,
      logger: ctx.logger,
      missedAfterMs: parseDuration(config.get<string>(CONFIG.missedAfter)),
      isAlive: (master) => (cluster ? cluster.isAlive(master) : Promise.resolve(master === 'local')),
      holdAfterClaimMs: parseDuration(config.get<string>(CONFIG.holdAfterClaim)),
      ...(metrics ? { lateness: latenessMetric(metrics) } : {}),
    });
    const service = new SchedulerService(jobs, scheduler, {
      engine,
      flows,
      stacks,
      workflowDirs: dirs,
      defaultTimezone: config.get<string>(CONFIG.timezone) || hostZone(),
      now: () => new Date(clock.now()),
      changed: (name) => cluster?.publish('scheduler.job-changed', { name }),
    });
    const off = cluster?.subscribe<{ name: string }>('scheduler.job-changed', ({ name }) => {
      jobs
        .refresh(name)
        .then(() => scheduler.forget(name))
        .catch((error: Error) =>
          ctx.logger.warn(`reading job ${name} changed by another master failed: ${error.message}`),
        );
    });
    if (off) ctx.onStop(off);
    // Messages between masters may be lost while a listener reconnects: read every job now and then.
    const reload = setInterval(() => {
      jobs.reload().catch((error: Error) => ctx.logger.warn(`reading the scheduler jobs failed: ${error.message}`));
    }, 30_000);
    reload.unref();
    ctx.onStop(() => clearInterval(reload));
    const offLost = cluster?.onMasterLost(async () => void (await scheduler.recover()));
    if (offLost) ctx.onStop(offLost);
    ctx.provide(SchedulesRef, service.asService());
    if (router) registerSchedulerRoutes(router, service);
    const offTile = tiles?.contribute({
      id: 'scheduled-jobs',
      title: 'Scheduled jobs',
      href: '/scheduler',
      permission: Permissions.scheduleView,
      order: 40,
      read: async () => {
        const list = jobs.list();
        return { value: list.length, detail: `${list.filter((job) => job.enabled).length} enabled` };
      },
    });
    if (offTile) ctx.onStop(offTile);
    ctx.lifecycle.ready.tapPromise('scheduler', async () => scheduler.start());
    ctx.onStop(async () => {
      await scheduler.close();
    });
  },
});
