// The REST routes this plugin serves, declared without handlers: the build writes the OpenAPI
// document and the UI client from them, the CLI builds commands from them (see RouteDeclaration).
import { Permissions, declareRoute } from '@runner/plugin-sdk';
import { Type } from '@runner/plugin-sdk/schema';

const StatsSchema = Type.Object({
  path: Type.String(),
  snapshotBytes: Type.Integer(),
  journalBytes: Type.Integer(),
  journalRecords: Type.Integer(),
  tables: Type.Array(Type.Object({ name: Type.String(), rows: Type.Integer() })),
  pageCount: Type.Integer(),
  pageSize: Type.Integer(),
  lastSnapshotAt: Type.Union([Type.String(), Type.Null()]),
  retention: Type.Array(
    Type.Object({
      name: Type.String({ description: 'what is kept: executions, task logs, ...' }),
      rule: Type.String({ description: 'the rule in words, with its config keys' }),
      kept: Type.Integer({ description: 'how many are kept now' }),
      oldest: Type.Optional(Type.String({ description: 'the oldest kept (ISO 8601)' })),
      lastPrunedAt: Type.Union([Type.String(), Type.Null()], { description: 'when the last pass ended' }),
      lastRemoved: Type.Integer({ description: 'removed by the last pass' }),
      lastError: Type.Optional(Type.String({ description: 'why the last pass failed' })),
    }),
    { description: 'what each retention policy keeps (pruned in the background: store.retention_interval)' },
  ),
});
const BackupQuery = Type.Object(
  { compress: Type.Optional(Type.Boolean({ description: 'gzip the image (default false)' })) },
  { additionalProperties: false },
);

export const getDbStats = declareRoute({
  method: 'GET',
  path: '/db/stats',
  summary: "the store's size, journal and row counts",
  tags: ['db'],
  permission: Permissions.systemAdmin,
  responses: { 200: StatsSchema },
});

export const getDbBackup = declareRoute({
  method: 'GET',
  path: '/db/backup',
  summary: 'a consistent copy of the whole database',
  tags: ['db'],
  permission: Permissions.systemAdmin,
  query: BackupQuery,
  responses: {
    200: { description: 'the SQLite image (gzip with compress=true)', contentType: 'application/octet-stream' },
  },
});

export const postDbVacuum = declareRoute({
  method: 'POST',
  path: '/db/vacuum',
  summary: 'compact the database',
  tags: ['db'],
  permission: Permissions.systemAdmin,
  responses: { 200: Type.Object({ bytesBefore: Type.Integer(), bytesAfter: Type.Integer() }) },
});

export const getClusterMasters = declareRoute({
  method: 'GET',
  path: '/cluster/masters',
  summary: 'the live masters sharing the store (one on the embedded store)',
  tags: ['cluster'],
  permission: Permissions.systemAdmin,
  responses: {
    200: Type.Object({
      self: Type.String({ description: 'the id of the master that answered' }),
      shared: Type.Boolean({ description: 'whether other masters may share the store (PostgreSQL)' }),
      masters: Type.Array(
        Type.Object({
          id: Type.String(),
          address: Type.String({ description: 'where it serves HTTP' }),
          startedAt: Type.String(),
          lastSeenAt: Type.String({ description: 'its last heartbeat' }),
        }),
      ),
    }),
  },
});

/** Every route above, for the plugin's definition. */
export const routes = [getDbStats, getDbBackup, postDbVacuum, getClusterMasters];
