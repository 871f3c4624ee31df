import {
  stackOf,
  type Cluster,
  type EventBus,
  type PluginContext,
  type ProcessGroups,
  type Store,
} from '@runner/plugin-sdk';
import { processOwner, recordProcessGroups, RunLeases, type InterruptedRun } from './run-lifecycle.js';
import type { RunStore } from './run-store.js';

/**
 * What the engine does about runs a dead process left behind, at start: ends them `interrupted`
 * (killing the process groups they left), announces them once every plugin is set up (hooks and
 * WebSocket clients subscribe in their setup), then leases its own runs and records their process
 * groups. On the embedded store this process holds the data directory's lock, hence `exclusive`;
 * on PostgreSQL other masters may share the database: runs are owned by the master's id
 * (`cluster.masterId`), only runs whose lease expired are ended at start, and the runs of a
 * master the cluster finds dead are ended by the one survivor that claimed it.
 */
export async function startRunLifecycle(options: {
  ctx: PluginContext;
  store: Store;
  runs: RunStore;
  processGroups?: ProcessGroups;
  cluster?: Cluster;
}): Promise<{ stop(): void }> {
  const { ctx, store, runs, processGroups, cluster } = options;
  const owner = cluster?.shared ? cluster.masterId : processOwner();
  const exclusive = store.dialect !== 'postgres';
  const interrupted = await runs.reconcile({ owner, logger: ctx.logger, exclusive });
  if (interrupted.length > 0) {
    const off = ctx.events.on('kernel.ready', () => {
      off();
      announce(ctx.events, interrupted);
    });
  }
  const unwatchLost = cluster?.onMasterLost(async (lost) => {
    announce(ctx.events, await runs.reconcile({ owner, logger: ctx.logger, exclusive: false, lost }));
  });
  const leases = new RunLeases(store, owner, ctx.logger);
  runs.useLeases(leases);
  leases.start();
  const unwatch = processGroups?.watch(recordProcessGroups(store, owner, ctx.logger));
  return {
    stop() {
      leases.stop();
      unwatch?.();
      unwatchLost?.();
    },
  };
}

function announce(events: EventBus, interrupted: InterruptedRun[]): void {
  for (const run of interrupted) {
    events.emit('workflow.failed', {
      workflow_name: run.workflowName,
      run_id: run.id,
      ...stackOf(run),
      status: 'interrupted',
      duration: run.duration,
      started_at: Math.floor(Date.parse(run.startedAt) / 1000),
      completed_at: Math.floor(Date.parse(run.completedAt) / 1000),
    });
  }
}
