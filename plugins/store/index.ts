import {
  ClusterRef,
  definePlugin,
  HttpRouterRef,
  optional,
  StoreRef,
  WebSocketHubRef,
  type HttpRouter,
  type Logger,
  type PluginContext,
  type WebSocketHub,
} from '@runner/plugin-sdk';
import { dbCommand } from './src/commands.js';
import {
  clusterTimings,
  EMBEDDED_CLOSE_SNAPSHOT_BYTES,
  postgresSettings,
  retentionIntervalMs,
  snapshotJournalBytes,
  STORE_CONFIG,
  transactionTimeoutMs,
} from './src/config.js';
import type { LockInfo } from './src/lock.js';
import type { OpenedStore, StoreOptions } from './src/sql-store.js';
import { routes } from './src/api.js';

export type { LockHolder, LockInfo } from './src/lock.js';
export type { CloseOptions, OpenedStore, StoreOptions } from './src/sql-store.js';

// Both helpers load their modules on call: `runner --help` imports this file and must stay fast.

/** Who holds `<dataDir>/runner.lock` (null when nobody); `alive` is false for a stale lock. */
export async function readLockHolder(dataDir: string): Promise<LockInfo | null> {
  const { readLockHolder: read } = await import('./src/lock.js');
  return read(dataDir);
}

/** Opens a data directory's store directly (taking its lock); for tools that run without a kernel. */
export async function openStore(dataDir: string, logger: Logger, options?: StoreOptions): Promise<OpenedStore> {
  const { openStore: open } = await import('./src/sql-store.js');
  return open(dataDir, logger, options);
}

export const plugin = definePlugin({
  id: 'store',
  version: '0.1.0',
  routes,
  description: 'Durable sql.js store: journal with grouped fsync, snapshots, a data-directory lock, backup and restore',
  profiles: ['master', 'embedded'],
  provides: [StoreRef, ClusterRef],
  dependsOn: { http: optional(HttpRouterRef), hub: optional(WebSocketHubRef) },
  commands: [dbCommand],
  commandOptions: [
    {
      command: 'server',
      options: [
        {
          flags: '--store <url>',
          description: 'keep the store on PostgreSQL (postgres://user:password@host/db); default: the data directory',
          configKey: 'store.url',
        },
      ],
    },
  ],
  config: STORE_CONFIG,
  // The masters' heartbeat rows (PostgreSQL): a copy of the database carries none of them.
  async schema() {
    const { CLUSTER_OWNER, CLUSTER_MIGRATIONS } = await import('./src/pg-cluster.js');
    return [{ owner: CLUSTER_OWNER, migrations: CLUSTER_MIGRATIONS, transient: ['cluster_masters'] }];
  },
  async doctor(context) {
    const { storeDoctorChecks } = await import('./src/doctor-checks.js');
    return storeDoctorChecks(context);
  },
  // Start-up replays up to store.snapshot_journal_bytes of journal, which can take seconds.
  setupTimeoutMs: 120_000,
  async setup(ctx, { http, hub }) {
    const postgres = postgresSettings(ctx.config);
    if (postgres !== undefined) {
      // One plugin choosing its backend at setup: the kernel and the other plugins see a Store.
      const { PostgresStore } = await import('./src/pg-store.js');
      const store = await PostgresStore.open(
        { ...postgres, onCondition: (reason) => http?.reportCondition('store', reason) },
        ctx.logger,
      );
      ctx.provide(StoreRef, store);
      const cluster = await joinCluster(ctx, store, http, hub);
      store.startRetention(retentionIntervalMs(ctx.config));
      if (http !== undefined) {
        const { registerDbRoutes } = await import('./src/routes.js');
        registerDbRoutes(http, store, cluster);
      }
      return {
        stop: async () => {
          await cluster.leave();
          await store.close();
        },
      };
    }
    const { openStore: open } = await import('./src/sql-store.js');
    const store = await open(ctx.config.dataDir, ctx.logger, {
      snapshotJournalBytes: snapshotJournalBytes(ctx.config),
      transactionTimeoutMs: transactionTimeoutMs(ctx.config),
      onCondition: (reason) => http?.reportCondition('store', reason),
    });
    ctx.provide(StoreRef, store);
    const { LocalCluster } = await import('./src/local-cluster.js');
    const cluster = new LocalCluster(() => addressOf(http));
    ctx.provide(ClusterRef, cluster);
    // Plugins set up after this one register their policies; the first pass waits a second.
    store.startRetention(retentionIntervalMs(ctx.config));
    if (http !== undefined) {
      const { registerDbRoutes } = await import('./src/routes.js');
      registerDbRoutes(http, store, cluster);
    }
    // Without a master (`runner run`, `runner repl`) a process's own writes are a few KB: left in
    // the journal for the next start to replay (~30 µs a record) rather than exporting the whole
    // database (2.5 ms a MB) and syncing it four times at every exit. A longer journal is folded.
    const closeOptions = ctx.profile === 'embedded' ? { snapshotAboveBytes: EMBEDDED_CLOSE_SNAPSHOT_BYTES } : {};
    return { stop: () => store.close(closeOptions) };
  },
});

function addressOf(http: HttpRouter | undefined): string | undefined {
  const address = http?.address();
  return address ? `${address.host}:${address.port}` : undefined;
}

/**
 * This master among the masters sharing the PostgreSQL store: its heartbeat row from now on,
 * looks for dead masters once every plugin is set up (their handlers registered), and this
 * master's WebSocket messages relayed to the others' clients (and theirs to its own).
 */
async function joinCluster(
  ctx: PluginContext,
  store: import('./src/pg-store.js').PostgresStore,
  http: HttpRouter | undefined,
  hub: WebSocketHub | undefined,
) {
  const { PgCluster } = await import('./src/pg-cluster.js');
  const cluster = new PgCluster(store, {
    ...clusterTimings(ctx.config),
    address: () => addressOf(http),
    logger: ctx.logger,
  });
  await cluster.join();
  ctx.provide(ClusterRef, cluster);
  if (hub !== undefined) {
    const offLocal = hub.onMessage((text, permission) => cluster.publish('ws', [text, permission]));
    const offRemote = cluster.subscribe<[string, string]>('ws', ([text, permission]) =>
      hub.deliver(text, permission as Parameters<WebSocketHub['deliver']>[1]),
    );
    ctx.onStop(() => {
      offLocal();
      offRemote();
    });
  }
  const off = ctx.events.on('kernel.ready', () => {
    off();
    cluster.watch();
  });
  return cluster;
}
